public import IntentVocabulary

/// One entry of an allow or deny list (`Docs/PERMISSIONS.md`): an intent type pattern, optionally limited to some
/// phases.
///
/// - `SendPayment`: that type, every phase;
/// - `com.example.*`: every type that starts with `com.example.` (`*` stands for any run of characters, also none;
///   it may appear anywhere and more than once; `*` alone is every type);
/// - `SendPayment:resolve,confirm`: that type, only the resolve and confirm phases (for a sender: a `lifecycle`
///   request needs every phase it runs).
///
/// Types are the characters of intent types, `[A-Za-z0-9_.-]`, so `*`, `:` and `,` never clash with them.
public struct IntentPattern: Sendable, Hashable, CustomStringConvertible {
    /// The type part as written (`*` wildcards included).
    public let typePattern: String
    /// The phases it covers; all three when the entry names none.
    public let phases: Set<RequestPhase>
    /// The type part split at its `*`s: the literal pieces in order (`a*b*` is `["a", "b", ""]`).
    private let pieces: [[UInt8]]
    private let isLiteral: Bool

    /// The phases an entry without `:` covers.
    public static let everyPhase: Set<RequestPhase> = [.resolve, .confirm, .handle]

    /// Parses an entry.
    /// - Throws: ``PatternError`` saying why `text` is not an entry.
    public init(parsing text: String) throws(PatternError) {
        let parts = text.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        let type = String(parts[0])
        guard !type.isEmpty, type.utf8.count <= 255 else {
            throw PatternError("the type part must be 1 to 255 characters")
        }
        guard type.utf8.allSatisfy({ IntentTypeName.isValidByte($0) || $0 == UInt8(ascii: "*") }) else {
            throw PatternError("a type pattern has only A-Z, a-z, 0-9, '_', '.', '-' and the wildcard '*'")
        }
        var phases = Self.everyPhase
        if parts.count == 2 {
            phases = []
            for name in parts[1].split(separator: ",", omittingEmptySubsequences: false) {
                guard let phase = RequestPhase(rawValue: String(name)), phase != .lifecycle else {
                    throw PatternError("\"\(name)\" is not a phase (resolve, confirm or handle)")
                }
                phases.insert(phase)
            }
        }
        typePattern = type
        self.phases = phases
        pieces = type.utf8.split(separator: UInt8(ascii: "*"), omittingEmptySubsequences: false).map(Array.init)
        isLiteral = pieces.count == 1
    }

    public var description: String {
        phases == Self.everyPhase
            ? typePattern
            : typePattern + ":"
                + RequestPhase.allCases.filter { phases.contains($0) }.map(\.rawValue).joined(separator: ",")
    }

    /// Whether the entry names `type` exactly, without wildcards (an allow list's fast path).
    public var literalType: String? { isLiteral ? typePattern : nil }

    /// Whether the entry covers `type` in `phase`.
    public func matches(type: [UInt8], phase: RequestPhase) -> Bool {
        phases.contains(phase) && matches(type: type)
    }

    /// Whether the type part covers `type` (whatever the phases).
    public func matches(type bytes: [UInt8]) -> Bool {
        if isLiteral { return bytes == pieces[0] }
        // Glob with `*` only: the first piece is a prefix, the last a suffix, the middle ones found in order.
        guard let first = pieces.first, let last = pieces.last, bytes.count >= first.count + last.count,
            bytes.starts(with: first), bytes.reversed().starts(with: last.reversed())
        else { return false }
        var at = first.count
        let end = bytes.count - last.count
        for piece in pieces.dropFirst().dropLast() where !piece.isEmpty {
            guard let found = Self.find(piece, in: bytes, from: at, before: end) else { return false }
            at = found + piece.count
        }
        return true
    }

    private static func find(_ piece: [UInt8], in bytes: [UInt8], from start: Int, before end: Int) -> Int? {
        guard end - start >= piece.count else { return nil }
        var index = start
        while index + piece.count <= end {
            if bytes[index..<(index + piece.count)].elementsEqual(piece) { return index }
            index += 1
        }
        return nil
    }

}

/// Why an allow or deny entry is not a pattern.
public struct PatternError: Error, Sendable, Hashable {
    /// What is wrong.
    public let message: String
    init(_ message: String) { self.message = message }
}
