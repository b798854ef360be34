public import ConciergeJSON

/// One line of a transcript (`Schemas/json/transcript.schema.json`): a JSON object whose key `"record"` names its
/// kind. A conversation's file is a `start`, then for each turn a `turn`, a `phase` per RESULT of the turn's jobs and
/// a `reply`, and, once the conversation has ended, an `end`.
///
/// Bodies (`sent`, `input`, `output`, `body`) are the JSON values themselves, not strings. Times (`at`) are UTC ISO
/// 8601 with milliseconds (``TranscriptClock/timestamp()``); durations (`ms`) are milliseconds as doubles.
///
/// ```swift
/// let line = TranscriptRecord.end(.init(ending: "completed", turns: 3, at: TranscriptClock.timestamp()))
///     .jsonLine()        // {"record":"end","at":"2026-11-28T12:00:00.000Z","ending":"completed","turns":3}
/// let record = try TranscriptRecord(jsonLine: line)
/// ```
public enum TranscriptRecord: Sendable, Hashable {
    /// The first line: the conversation, its intent type, its flags and its re-prompt bound.
    case start(Start)
    /// A TURN as the client sent it.
    case turn(Turn)
    /// One RESULT of one of the turn's jobs: the phase, the body it ran on and what it answered.
    case phase(Phase)
    /// The final or error REPLY the client got for the turn (progress replies are not recorded).
    case reply(Reply)
    /// The last line of an ended conversation.
    case end(End)

    /// The version of the format this module writes and reads.
    public static let formatVersion = 1

    /// The phases a `phase` record names.
    public static let phases: Set<String> = ["resolve", "confirm", "handle"]
    /// The outcomes a `phase` record names (the RESULT's F3).
    public static let outcomes: Set<String> = ["continue", "stop", "error", "cancelled"]
    /// The statuses a `reply` record names.
    public static let statuses: Set<String> = ["final", "error"]
    /// The flags a `start` record names (the TURN's flags of turn 1).
    public static let flagWords: Set<String> = ["record", "confirm"]
    /// The endings an `end` record names.
    public static let endings: Set<String> = [
        "completed", "refused", "declined", "cancelled", "expired", "too-many-asks", "failed",
    ]

    /// `{"record":"start", ...}`.
    public struct Start: Sendable, Hashable {
        /// The format version (``TranscriptRecord/formatVersion``).
        public var version: Int
        /// The conversation id the client chose (1 to 255 printable ASCII bytes).
        public var conversation: String
        /// The intent type of turn 1's intent.
        public var intentType: String
        /// When the conversation started (UTC ISO 8601 with milliseconds).
        public var at: String
        /// The flags of turn 1 (`record`, `confirm`), in the order sent.
        public var flags: [String]
        /// How many times each parameter may be asked.
        public var maxAsks: Int

        /// Creates a start record.
        public init(
            conversation: String, intentType: String, at: String, flags: [String], maxAsks: Int,
            version: Int = TranscriptRecord.formatVersion
        ) {
            self.version = version
            self.conversation = conversation
            self.intentType = intentType
            self.at = at
            self.flags = flags
            self.maxAsks = maxAsks
        }
    }

    /// `{"record":"turn", ...}`.
    public struct Turn: Sendable, Hashable {
        /// The turn's number (1 for the first).
        public var turn: Int
        /// The TURN's request id, as text.
        public var requestID: String
        /// The TURN's body: turn 1 an Interaction, later turns an Answer.
        public var sent: JSONValue
        /// When the broker took the turn.
        public var at: String

        /// Creates a turn record.
        public init(turn: Int, requestID: String, sent: JSONValue, at: String) {
            self.turn = turn
            self.requestID = requestID
            self.sent = sent
            self.at = at
        }
    }

    /// `{"record":"phase", ...}`.
    public struct Phase: Sendable, Hashable {
        /// The turn the job belongs to.
        public var turn: Int
        /// `resolve`, `confirm` or `handle`.
        public var phase: String
        /// The name of the worker that answered.
        public var worker: String
        /// The attempt number of the job (from 1).
        public var attempt: Int
        /// The body the phase ran on: the job's body, or in a chained job the previous phase's output.
        public var input: JSONValue
        /// The RESULT's outcome: `continue`, `stop`, `error` or `cancelled`.
        public var outcome: String
        /// The RESULT's body.
        public var output: JSONValue
        /// Milliseconds from the job (or the previous phase's RESULT) to this RESULT.
        public var ms: Double

        /// Creates a phase record.
        public init(
            turn: Int, phase: String, worker: String, attempt: Int, input: JSONValue, outcome: String,
            output: JSONValue, ms: Double
        ) {
            self.turn = turn
            self.phase = phase
            self.worker = worker
            self.attempt = attempt
            self.input = input
            self.outcome = outcome
            self.output = output
            self.ms = ms
        }
    }

    /// `{"record":"reply", ...}`.
    public struct Reply: Sendable, Hashable {
        /// The turn answered.
        public var turn: Int
        /// `final` or `error`.
        public var status: String
        /// The REPLY's phase frame (empty when it was empty; a line without `"phase"` reads as empty).
        public var phase: String
        /// The REPLY's body.
        public var body: JSONValue
        /// Milliseconds from the TURN to this REPLY, when the writer knew them.
        public var ms: Double?

        /// Creates a reply record.
        public init(turn: Int, status: String, phase: String, body: JSONValue, ms: Double?) {
            self.turn = turn
            self.status = status
            self.phase = phase
            self.body = body
            self.ms = ms
        }
    }

    /// `{"record":"end", ...}`.
    public struct End: Sendable, Hashable {
        /// How the conversation ended: `completed`, `refused`, `declined`, `cancelled`, `expired`, `too-many-asks`
        /// or `failed`.
        public var ending: String
        /// How many turns the conversation counted.
        public var turns: Int
        /// When it ended.
        public var at: String
        /// `too-many-asks`: the parameter that would have been asked once too often.
        public var parameter: String?
        /// `failed`: the error code that ended it.
        public var code: String?

        /// Creates an end record.
        public init(ending: String, turns: Int, at: String, parameter: String? = nil, code: String? = nil) {
            self.ending = ending
            self.turns = turns
            self.at = at
            self.parameter = parameter
            self.code = code
        }
    }

    /// The record's kind, the value of its `"record"` key.
    public var kind: String {
        switch self {
        case .start: "start"
        case .turn: "turn"
        case .phase: "phase"
        case .reply: "reply"
        case .end: "end"
        }
    }

    /// The turn the record belongs to (nil for `start` and `end`).
    public var turnNumber: Int? {
        switch self {
        case .turn(let turn): turn.turn
        case .phase(let phase): phase.turn
        case .reply(let reply): reply.turn
        case .start, .end: nil
        }
    }
}
