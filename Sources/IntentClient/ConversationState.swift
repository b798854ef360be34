public import ConciergeJSON

/// A conversation as the broker keeps it (`Schemas/json/conversation.schema.json`): what it asks now, how often it
/// asked each parameter, its turn number and, once it ended, why.
///
/// The broker adds this object (without ``intent``) to the body of every `final` REPLY of a turn, under the key
/// `"conversation"`, and to the error bodies it writes for turns; ``ConciergeClient/conversation(_:)`` and
/// ``ConciergeClient/endConversation(_:)`` answer it with ``intent``.
public struct ConversationState: Sendable, Hashable {
    /// Where the conversation stands.
    public struct Phase: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        /// A resolve stopped: the conversation waits for answers about ``ConversationState/asking``.
        public static let asking = Phase(rawValue: "asking")
        /// Started with ``ConversationFlags/confirmBeforeHandle``, confirm answered `ready`: the conversation waits
        /// for a yes or no to the whole intent (``Conversation/confirm(_:)``).
        public static let confirming = Phase(rawValue: "confirming")
        /// A turn is running.
        public static let running = Phase(rawValue: "running")
        /// Over: see ``ConversationState/ending``. Still readable (and its last turn replayable) for the broker's
        /// result time to live.
        public static let ended = Phase(rawValue: "ended")
        public var description: String { rawValue }
    }

    /// Why a conversation ended. The broker may add endings: compare with the constants, and treat others as
    /// failures.
    public struct Ending: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        /// Handle ran (whatever its code).
        public static let completed = Ending(rawValue: "completed")
        /// Confirm answered a code other than `ready`.
        public static let refused = Ending(rawValue: "refused")
        /// The user said no to the whole intent.
        public static let declined = Ending(rawValue: "declined")
        /// Ended by ``ConciergeClient/endConversation(_:)``.
        public static let cancelled = Ending(rawValue: "cancelled")
        /// Idle past the broker's time to live (`--conversation-ttl`).
        public static let expired = Ending(rawValue: "expired")
        /// A parameter would have been asked more than ``ConversationState/maxAsks`` times
        /// (``ConversationState/endingParameter`` names it).
        public static let tooManyAsks = Ending(rawValue: "too-many-asks")
        /// A turn failed after its handle job was sent: handle may have run, and is never run again
        /// (``ConversationState/endingCode`` is the error).
        public static let failed = Ending(rawValue: "failed")
        public var description: String { rawValue }
    }

    /// One parameter the conversation asks about now.
    public struct Ask: Sendable, Hashable {
        /// The parameter's name.
        public let parameter: String
        /// Its last resolution's kind: `needsValue`, `disambiguation`, `confirmationRequired` or `unsupported`.
        public let kind: String
        /// The options of a `disambiguation` (answer with an index into them).
        public let options: [JSONValue]
        /// The value of a `confirmationRequired` (answer yes or no), when the object names it (the broker's leaves
        /// it out: it is in the intent, and in the turn reply's `"resolve"`).
        public let value: JSONValue?
        /// The reason of an `unsupported`, when the object names it (the broker's leaves it out: it is in the turn
        /// reply's `"resolve"`).
        public let reason: String?
        /// How many times the parameter was asked so far, this time included.
        public let asks: Int

        /// An ask with these fields.
        public init(
            parameter: String, kind: String, options: [JSONValue] = [], value: JSONValue? = nil,
            reason: String? = nil, asks: Int = 1
        ) {
            self.parameter = parameter
            self.kind = kind
            self.options = options
            self.value = value
            self.reason = reason
            self.asks = asks
        }
    }

    /// The conversation id (chosen by the client that started it).
    public let id: String
    /// The intent type the conversation carries.
    public let intentType: String
    /// The number of the last turn the broker counted (a turn refused or failed before handle is not counted).
    public let turn: Int
    /// Where it stands.
    public let phase: Phase
    /// What it asks now (empty unless ``phase`` is ``Phase/asking``).
    public let asking: [Ask]
    /// How many times each parameter was asked so far.
    public let asks: [String: Int]
    /// No parameter is asked more than this many times.
    public let maxAsks: Int
    /// The intent with every answer and resolved value written in (in CONVERSATION answers only).
    public let intent: JSONValue?
    /// Why it ended (nil while it goes on).
    public let ending: Ending?
    /// With ``Ending/tooManyAsks``: the parameter asked too often.
    public let endingParameter: String?
    /// With ``Ending/failed``: the error code that ended it.
    public let endingCode: String?
    /// Idle time left before it expires (nil while a turn runs, or once it ended).
    public let expiresIn: Duration?
    /// Whether the broker records a transcript of it.
    public let isRecording: Bool
    /// The object as the broker sent it (keys this version does not know included).
    public let json: JSONValue

    /// Reads a Conversation object; nil if it has no `id` or no `turn`.
    public init?(json: JSONValue) {
        guard json.objectValue != nil, let id = json["id"]?.stringValue, let turn = json["turn"]?.intValue else {
            return nil
        }
        self.json = json
        self.id = id
        self.turn = turn
        intentType = json["intentType"]?.stringValue ?? ""
        phase = Phase(rawValue: json["state"]?.stringValue ?? "")
        asking = (json["asking"]?.arrayValue ?? []).compactMap { ask in
            guard let parameter = ask["parameter"]?.stringValue else { return nil }
            return Ask(
                parameter: parameter, kind: ask["kind"]?.stringValue ?? "", options: ask["options"]?.arrayValue ?? [],
                value: ask["value"], reason: ask["reason"]?.stringValue, asks: ask["asks"]?.intValue ?? 1)
        }
        var asks: [String: Int] = [:]
        for (parameter, count) in json["asks"]?.objectValue ?? [:] { asks[parameter] = count.intValue ?? 0 }
        self.asks = asks
        maxAsks = json["maxAsks"]?.intValue ?? 0
        intent = json["intent"]
        ending = json["ending"]?.stringValue.map(Ending.init(rawValue:))
        endingParameter = json["endingParameter"]?.stringValue
        endingCode = json["endingCode"]?.stringValue
        expiresIn = json["expiresInMs"]?.int64Value.map { .milliseconds($0) }
        isRecording = json["recording"]?.boolValue ?? false
    }

    /// Whether the conversation is over.
    public var isEnded: Bool { phase == .ended }
}
