public import IntentVocabulary

/// An allow list and a deny list of ``IntentPattern``s: what one identity may send, or may serve. Deny wins over
/// allow; nothing is allowed that no allow entry covers.
public struct AccessList: Sendable, Hashable {
    /// The allow entries, in file order.
    public let allow: [IntentPattern]
    /// The deny entries, in file order.
    public let deny: [IntentPattern]
    /// Allow entries without wildcards and for every phase, by type: one hash lookup for the common case.
    private let allowedTypes: Set<[UInt8]>
    private let otherAllows: [IntentPattern]

    /// A list with these entries.
    public init(allow: [IntentPattern] = [], deny: [IntentPattern] = []) {
        self.allow = allow
        self.deny = deny
        var types = Set<[UInt8]>()
        var others: [IntentPattern] = []
        for entry in allow {
            if let type = entry.literalType, entry.phases == IntentPattern.everyPhase {
                types.insert(Array(type.utf8))
            } else {
                others.append(entry)
            }
        }
        allowedTypes = types
        otherAllows = others
    }

    /// Nothing allowed.
    public static let none = AccessList()

    /// Whether `type` is allowed in `phase`: an allow entry covers it and no deny entry does.
    /// `lifecycle` is allowed when each phase it runs is.
    public func permits(type: [UInt8], phase: RequestPhase) -> Bool {
        if phase == .lifecycle { return permits(type: type, phases: IntentPattern.everyPhase) }
        guard allowedTypes.contains(type) || otherAllows.contains(where: { $0.matches(type: type, phase: phase) })
        else { return false }
        return !deny.contains { $0.matches(type: type, phase: phase) }
    }

    /// Whether every phase of `phases` is allowed for `type` (a lifecycle request needs each phase it runs).
    public func permits(type: [UInt8], phases: some Sequence<RequestPhase>) -> Bool {
        phases.allSatisfy { permits(type: type, phase: $0) }
    }

    /// Whether `type` is allowed in every phase (a worker serves a type whole: it gets every phase's jobs).
    public func permitsWhole(type: [UInt8]) -> Bool {
        permits(type: type, phases: IntentPattern.everyPhase)
    }
}
