import ConciergeJSON

/// What a handler's resolve returns: one ``ResolutionResult`` per parameter, set through typed key paths.
///
/// ```swift
/// var resolutions = Resolutions<RequestRideIntent>()
/// resolutions[\.dropOffLocation] = .success(place)
/// resolutions[\.partySize] = .unsupported(Reason.tooManyRiders)
/// return resolutions
/// ```
/// A parameter the handler does not set gets the default: `success(value)` when the intent has a value, else
/// `notRequired`. The values of `success` and `confirmationRequired` are written back into the intent that goes
/// back to the caller, including anything the handler filled in (such as a ``Person/customIdentifier``), so the next
/// round can skip matching.
public struct Resolutions<I: Intent>: Sendable {
    struct Entry: Sendable {
        let kind: ResolutionKind
        let json: JSONValue
        let resolvedValue: JSONValue?
        let typed: any Sendable
    }

    private(set) var entries: [String: Entry] = [:]
    /// Key paths that were set but are not declared in ``Intent/parameters`` (a programming error, reported by the
    /// job runner as `handler-failed`).
    private(set) var undeclared: [String] = []

    /// Creates resolutions in which every parameter has its default.
    public init() {}

    /// The resolution of the parameter stored at `keyPath`; nil means the default.
    public subscript<Value: IntentParameterValue>(keyPath: WritableKeyPath<I, Value?>) -> ResolutionResult<Value>? {
        get {
            guard let name = Self.name(of: keyPath) else { return nil }
            return entries[name]?.typed as? ResolutionResult<Value>
        }
        set {
            guard let name = Self.name(of: keyPath) else {
                undeclared.append("\(keyPath)")
                return
            }
            guard let newValue else {
                entries[name] = nil
                return
            }
            entries[name] = Entry(
                kind: newValue.kind,
                json: newValue.jsonValue,
                resolvedValue: newValue.resolvedValue?.intentJSON,
                typed: newValue
            )
        }
    }

    /// Whether no parameter has a resolution set (all get their defaults).
    public var isEmpty: Bool { entries.isEmpty && undeclared.isEmpty }

    /// The kind of resolution set for the parameter named `name`, or nil when it has the default.
    public func kind(ofParameterNamed name: String) -> ResolutionKind? { entries[name]?.kind }

    private static func name(of keyPath: AnyKeyPath) -> String? {
        for parameter in I.parameters where parameter.matches(keyPath) { return parameter.name }
        return nil
    }
}
