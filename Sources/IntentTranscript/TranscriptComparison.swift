public import ConciergeJSON

/// A replay's answers compared with the recorded ones, field by field: every mismatch with its turn, phase, key path,
/// recorded value and replayed value, and a readable diff as ``description``.
///
/// What is compared: a phase's `outcome` and `output`, and a reply's `status`, `phase` and `body`. A record's own
/// `at`, `ms`, `requestId`, `worker` and `attempt` are never compared (they vary from run to run by nature); inside
/// bodies, the key paths of ``alwaysIgnored`` and those given to ``init(ignoring:)`` are left out.
///
/// A key path is the keys from the body's top, joined with dots (`handle.data.messageId`); an array element's key is
/// its index (`resolve.recipient.options.0.displayName`); `*` stands for any one key (`resolve.*.options`) and `**` for
/// any number of keys (`**.messageId`: that key wherever it is, as in `handle.data` and in the default user activity's
/// copy of the data). A path ignores what is under it too (`handle.data` ignores every key of the data).
///
/// ```
/// turn 3, handle, output: handle.data.recipient
/// - recorded: "contact-john-appleseed"
/// + replayed: "contact-john-smith"
/// ```
public struct TranscriptComparison: Sendable, Hashable, CustomStringConvertible {
    /// One field that differs.
    public struct Mismatch: Sendable, Hashable, CustomStringConvertible {
        /// The turn of the record.
        public let turn: Int
        /// The phase (`resolve`, `confirm`, `handle`), or `reply` for a reply.
        public let phase: String
        /// What differs: `outcome` or `output` of a phase, `status`, `phase` or `body` of a reply.
        public let part: String
        /// The key path inside the part (empty for the part as a whole).
        public let path: String
        /// The recorded value (nil: absent).
        public let recorded: JSONValue?
        /// The replayed value (nil: absent).
        public let replayed: JSONValue?

        /// Creates a mismatch.
        public init(turn: Int, phase: String, part: String, path: String, recorded: JSONValue?, replayed: JSONValue?) {
            self.turn = turn
            self.phase = phase
            self.part = part
            self.path = path
            self.recorded = recorded
            self.replayed = replayed
        }

        /// Three lines: where, then `- recorded: ...` and `+ replayed: ...` (compact JSON, or `(absent)`).
        public var description: String {
            let place = "turn \(turn), \(phase), \(part)" + (path.isEmpty ? "" : ": \(path)")
            return place + "\n- recorded: " + Self.show(recorded) + "\n+ replayed: " + Self.show(replayed)
        }

        static func show(_ value: JSONValue?) -> String {
            guard let value else { return "(absent)" }
            let text = value.serializedString()
            return text.count <= 400 ? text : String(text.prefix(400)) + "…"
        }
    }

    /// The key paths ignored in every comparison: `conversation.expiresInMs` of reply bodies (the idle time left when
    /// the reply was written, which depends on timing).
    public static let alwaysIgnored = ["conversation.expiresInMs"]

    /// Every key path ignored: ``alwaysIgnored`` and the ones given.
    public let ignoredPaths: [String]
    /// The mismatches found so far, in the order compared.
    public private(set) var mismatches: [Mismatch] = []
    /// How many records were compared.
    public private(set) var comparedRecords = 0

    /// The parsed ``ignoredPaths``.
    private let ignoredKeys: [[Substring]]

    /// A comparison ignoring ``alwaysIgnored`` and `paths` (dotted key paths, e.g. `handle.data.messageId`).
    public init(ignoring paths: [String] = []) {
        ignoredPaths = Self.alwaysIgnored + paths
        ignoredKeys = ignoredPaths.map { $0.split(separator: ".", omittingEmptySubsequences: false) }
    }

    /// Whether nothing differed.
    public var isMatch: Bool { mismatches.isEmpty }

    /// Compares a replayed phase with its record: the outcome, then the output.
    public mutating func compare(_ recorded: TranscriptRecord.Phase, outcome: String, output: JSONValue) {
        comparedRecords += 1
        if outcome != recorded.outcome {
            mismatches.append(
                Mismatch(
                    turn: recorded.turn, phase: recorded.phase, part: "outcome", path: "",
                    recorded: .string(recorded.outcome), replayed: .string(outcome)))
        }
        compare(recorded.output, output, path: [], turn: recorded.turn, phase: recorded.phase, part: "output")
    }

    /// Compares a replayed reply with its record: the status, the phase, then the body.
    public mutating func compare(_ recorded: TranscriptRecord.Reply, status: String, phase: String, body: JSONValue) {
        comparedRecords += 1
        if status != recorded.status {
            mismatches.append(
                Mismatch(
                    turn: recorded.turn, phase: "reply", part: "status", path: "", recorded: .string(recorded.status),
                    replayed: .string(status)))
        }
        if phase != recorded.phase {
            mismatches.append(
                Mismatch(
                    turn: recorded.turn, phase: "reply", part: "phase", path: "", recorded: .string(recorded.phase),
                    replayed: .string(phase)))
        }
        compare(recorded.body, body, path: [], turn: recorded.turn, phase: "reply", part: "body")
    }

    /// Records that a recorded phase or reply got no replayed answer at all (the target stopped answering).
    public mutating func missing(turn: Int, phase: String, part: String, recorded: JSONValue) {
        comparedRecords += 1
        mismatches.append(Mismatch(turn: turn, phase: phase, part: part, path: "", recorded: recorded, replayed: nil))
    }

    /// Whether the key path `path` is ignored: some ignored path matches its first keys.
    public func isIgnored(_ path: [String]) -> Bool {
        ignoredKeys.contains { Self.matchesPrefix($0[...], path[...]) }
    }

    /// Whether `pattern` matches the first keys of `path` (`*` one key, `**` any number of keys, none included).
    static func matchesPrefix(_ pattern: ArraySlice<Substring>, _ path: ArraySlice<String>) -> Bool {
        guard let first = pattern.first else { return true }
        if first == "**" {
            let rest = pattern.dropFirst()
            return path.indices.contains { matchesPrefix(rest, path[$0...]) }
                || matchesPrefix(rest, path[path.endIndex...])
        }
        guard let key = path.first, first == "*" || first == key else { return false }
        return matchesPrefix(pattern.dropFirst(), path.dropFirst())
    }

    /// Compares two values under `path`, descending into objects and arrays so that each mismatch names one field.
    mutating func compare(
        _ recorded: JSONValue?, _ replayed: JSONValue?, path: [String], turn: Int, phase: String, part: String
    ) {
        guard !isIgnored(path), recorded != replayed else { return }
        switch (recorded, replayed) {
        case (.object(let left)?, .object(let right)?):
            var keys = left.keys
            for key in right.keys where left[key] == nil { keys.append(key) }
            for key in keys.sorted() {
                compare(left[key], right[key], path: path + [key], turn: turn, phase: phase, part: part)
            }
        case (.array(let left)?, .array(let right)?):
            for index in 0..<max(left.count, right.count) {
                compare(
                    index < left.count ? left[index] : nil, index < right.count ? right[index] : nil,
                    path: path + [String(index)], turn: turn, phase: phase, part: part)
            }
        default:
            mismatches.append(
                Mismatch(
                    turn: turn, phase: phase, part: part, path: path.joined(separator: "."), recorded: recorded,
                    replayed: replayed))
        }
    }

    /// `ok` when nothing differed; else one block per mismatch (``Mismatch/description``), blank lines between.
    public var description: String {
        mismatches.isEmpty ? "ok" : mismatches.map(\.description).joined(separator: "\n\n")
    }
}
