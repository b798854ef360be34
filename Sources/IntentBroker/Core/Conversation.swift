import ConciergeJSON
import IntentWire

/// Whose conversation it is, and its id: a client's identity (its CURVE public key and scope, PROTOCOL.md 3.4;
/// without either, its routing id) and the id the client chose (`Schemas/PROTOCOL.md` section 4.11). Another client
/// never finds it.
struct ConversationKey: Hashable {
    let scope: [UInt8]
    let id: [UInt8]

    /// The id as text (it is printable ASCII).
    var name: String { String(decoding: id, as: UTF8.self) }
}

/// A conversation the broker carries between turns (section 4.11): the intent as the last turn left it, what it
/// asks the caller, how often it asked each parameter, and the reply of its last turn (sent again when that turn is
/// retried).
///
/// The broker writes answers into the intent and reads resolutions out of outputs: it parses the bodies of
/// conversation turns, and only those.
struct Conversation {
    /// Where the conversation is.
    enum State: String {
        /// Its last turn stopped at resolve: it waits for answers about ``Conversation/asking``.
        case asking
        /// Its last turn's confirm answered `ready` and the caller asked to confirm first: it waits for
        /// `{"confirm": true|false}`.
        case confirming
        /// A turn is in flight.
        case running
        /// It ended (``Conversation/ending`` says how).
        case ended
    }

    /// How a conversation ended.
    enum Ending: String, CaseIterable {
        /// Handle ran (whatever its code).
        case completed
        /// Confirm answered a code other than `ready`.
        case refused
        /// The caller answered no to the confirmation of the whole intent.
        case declined
        /// END.
        case cancelled
        /// Idle past its time to live.
        case expired
        /// A parameter would have been asked more often than ``Conversation/maxAsks``.
        case tooManyAsks = "too-many-asks"
        /// A turn ended in an error after its handle job was sent: handle may have run and never runs again.
        case failed
    }

    /// One parameter the conversation asks about, from the last resolve output.
    struct Asked: Equatable {
        let parameter: String
        /// `needsValue`, `disambiguation`, `confirmationRequired` or `unsupported`.
        let kind: String
        /// The options of a disambiguation.
        let options: [JSONValue]
    }

    /// The reply a turn ended with, kept to send again when the turn is retried.
    struct StoredReply {
        let isError: Bool
        let phase: RequestPhase?
        let body: [UInt8]
    }

    let key: ConversationKey
    let intentType: [UInt8]
    let flags: ClientTurn.Flags
    /// The fingerprint of turn 1's body as received (section 4.11.5): a turn 1 sent again under this id must carry
    /// the same body (and ``flags``), else it is `idempotency-conflict`. Nil for a conversation read back from a
    /// journal written before the broker kept it (its turn 1 is then not compared).
    var firstTurn: BodyFingerprint?
    let maxAsks: Int
    /// Whether its turns are recorded in a transcript.
    let recording: Bool
    /// The number of the last turn that ran or runs.
    var turn = 1
    var state = State.running
    /// The state before the turn in flight (it comes back if the turn ends in an error before handle).
    var stateBeforeTurn = State.asking
    /// The intent as the last output left it (resolved values written back); for a first turn in flight, the one
    /// sent.
    var intent: JSONValue {
        didSet { intentSize = intent.serialized().count }
    }
    /// The size of ``intent`` serialized (what keeping it costs).
    private(set) var intentSize = 0
    /// What the conversation asks, from the last resolve output that stopped.
    var asking: [Asked] = []
    /// The output of the last confirm that answered `ready` (handle runs on it), while ``state`` is `confirming`.
    var confirmOutput: [UInt8]?
    /// How often each parameter was asked, in the order first asked.
    var asks: [(parameter: String, count: Int)] = []
    var ending: Ending?
    var endingParameter: String?
    var endingCode: String?
    /// The reply of the last turn that counted.
    var lastReply: StoredReply?
    /// The broker's request running the turn in flight, and its key (the client's routing id and request id).
    var running: (request: RequestID, key: RequestKey)?
    /// The request of the turn that was in flight when END came: its ending becomes the last reply (a retry of that
    /// turn is answered with how it ended).
    var cancelledTurn: RequestID?
    /// Read back from the journal: the key of the turn that was in flight, until recovery links its request.
    var recoveredTurnKey: RequestKey?
    /// Monotonic nanoseconds: when the last turn ended (idle time counts from here), and when it ended.
    var idleSince: UInt64
    var endedAt: UInt64?
    /// The definition the conversation started under (section 5.18): every turn runs on a worker serving it or a
    /// compatible later one. Nil when its type's workers announce none (and for one recovered from a journal).
    var pin: DefinitionPin?
    let startedAt: UInt64

    init(
        key: ConversationKey, intentType: [UInt8], flags: ClientTurn.Flags, maxAsks: Int, recording: Bool,
        intent: JSONValue, now: UInt64
    ) {
        self.key = key
        self.intentType = intentType
        self.flags = flags
        self.maxAsks = maxAsks
        self.recording = recording
        self.intent = intent
        self.intentSize = intent.serialized().count
        self.idleSince = now
        self.startedAt = now
    }

    var intentTypeName: String { String(decoding: intentType, as: UTF8.self) }

    /// How many times `parameter` was asked.
    func askCount(_ parameter: String) -> Int {
        asks.first { $0.parameter == parameter }?.count ?? 0
    }

    /// Counts one more ask of `parameter`; returns the new count.
    mutating func countAsk(_ parameter: String) -> Int {
        if let index = asks.firstIndex(where: { $0.parameter == parameter }) {
            asks[index].count += 1
            return asks[index].count
        }
        asks.append((parameter, 1))
        return 1
    }

    /// What keeping it costs, roughly, in bytes (its bodies; the memory bound counts this).
    var cost: Int {
        256 + key.id.count + key.scope.count + intentSize + (confirmOutput?.count ?? 0)
            + (lastReply?.body.count ?? 0) + asking.reduce(0) { $0 + 64 + $1.options.count * 64 }
    }

    /// The Conversation object of section 4.11: with the intent for CONVERSATION answers, without it in turn replies.
    func json(includingIntent: Bool, ttl: UInt64, now: UInt64) -> JSONValue {
        var object: JSONObject = [
            "id": .string(key.name), "intentType": .string(intentTypeName), "turn": .int(Int64(turn)),
            "state": .string(state.rawValue), "maxAsks": .int(Int64(maxAsks)), "recording": .bool(recording),
        ]
        object["asking"] = .array(
            state == .asking
                ? asking.map { asked in
                    var entry: JSONObject = [
                        "parameter": .string(asked.parameter), "kind": .string(asked.kind),
                        "asks": .int(Int64(askCount(asked.parameter))),
                    ]
                    if asked.kind == "disambiguation" { entry["options"] = .array(asked.options) }
                    return .object(entry)
                } : [])
        object["asks"] = .object(JSONObject(asks.map { ($0.parameter, JSONValue.int(Int64($0.count))) }))
        if includingIntent { object["intent"] = intent }
        if let ending { object["ending"] = .string(ending.rawValue) }
        if let endingParameter { object["endingParameter"] = .string(endingParameter) }
        if let endingCode { object["endingCode"] = .string(endingCode) }
        if state == .asking || state == .confirming {
            let left = idleSince &+ ttl > now ? (idleSince &+ ttl - now) / 1_000_000 : 0
            object["expiresInMs"] = .int(Int64(left))
        }
        return .object(object)
    }
}

extension Conversation {
    /// The conversation as the journal keeps it: everything but the turn in flight's request, which the journal keeps
    /// as a request of its own (linked again on recovery through its key).
    func journalDocument() -> [UInt8] {
        var object: JSONObject = [
            "intentType": .string(intentTypeName), "flags": .int(Int64(flags.rawValue)),
            "maxAsks": .int(Int64(maxAsks)), "recording": .bool(recording), "turn": .int(Int64(turn)),
            "state": .string(state.rawValue), "stateBeforeTurn": .string(stateBeforeTurn.rawValue), "intent": intent,
            "asking": .array(
                asking.map {
                    .object([
                        "parameter": .string($0.parameter), "kind": .string($0.kind), "options": .array($0.options),
                    ])
                }),
            "asks": .array(asks.map { .array([.string($0.parameter), .int(Int64($0.count))]) }),
        ]
        if let confirmOutput { object["confirmOutput"] = .string(Self.hex(confirmOutput)) }
        if let firstTurn { object["firstTurn"] = .string(Self.hex(firstTurn)) }
        if let ending { object["ending"] = .string(ending.rawValue) }
        if let endingParameter { object["endingParameter"] = .string(endingParameter) }
        if let endingCode { object["endingCode"] = .string(endingCode) }
        if let lastReply {
            object["lastReply"] = .object([
                "isError": .bool(lastReply.isError), "phase": .string(lastReply.phase?.name.description ?? ""),
                "body": .string(Self.hex(lastReply.body)),
            ])
        }
        if let running {
            object["running"] = .object([
                "client": .string(Self.hex(running.key.client)), "requestId": .string(Self.hex(running.key.id)),
            ])
        }
        return JSONValue.object(object).serialized()
    }

    /// A conversation read back from its journal document (nil when the document is not one); its clocks start
    /// again at `now`, and a turn that was in flight is named by ``recoveredTurnKey`` until recovery links it.
    init?(journalDocument bytes: [UInt8], key: ConversationKey, now: UInt64) {
        guard case .object(let object)? = try? JSONValue.parse(bytes),
            case .string(let type)? = object["intentType"], let flags = object["flags"]?.intValue,
            let maxAsks = object["maxAsks"]?.intValue, let turn = object["turn"]?.intValue,
            let state = object["state"]?.stringValue.flatMap(State.init(rawValue:)), let intent = object["intent"]
        else { return nil }
        self.init(
            key: key, intentType: Array(type.utf8), flags: ClientTurn.Flags(rawValue: UInt8(truncatingIfNeeded: flags)),
            maxAsks: maxAsks, recording: object["recording"]?.boolValue ?? false, intent: intent, now: now)
        self.turn = turn
        self.state = state
        self.stateBeforeTurn = object["stateBeforeTurn"]?.stringValue.flatMap(State.init(rawValue:)) ?? .asking
        self.asking = (object["asking"]?.arrayValue ?? []).compactMap { item in
            guard let parameter = item["parameter"]?.stringValue, let kind = item["kind"]?.stringValue else {
                return nil
            }
            return Asked(parameter: parameter, kind: kind, options: item["options"]?.arrayValue ?? [])
        }
        self.asks = (object["asks"]?.arrayValue ?? []).compactMap { pair in
            guard let name = pair[0]?.stringValue, let count = pair[1]?.intValue else { return nil }
            return (name, count)
        }
        self.confirmOutput = object["confirmOutput"]?.stringValue.flatMap(Self.bytes(hex:))
        self.firstTurn = object["firstTurn"]?.stringValue.flatMap(Self.fingerprint(hex:))
        self.ending = object["ending"]?.stringValue.flatMap(Ending.init(rawValue:))
        self.endingParameter = object["endingParameter"]?.stringValue
        self.endingCode = object["endingCode"]?.stringValue
        if case .object(let reply)? = object["lastReply"],
            let body = reply["body"]?.stringValue.flatMap(Self.bytes(hex:))
        {
            let phase = reply["phase"]?.stringValue.flatMap { name in
                RequestPhase.allCases.first { $0.name.description == name }
            }
            self.lastReply = StoredReply(isError: reply["isError"]?.boolValue ?? false, phase: phase, body: body)
        }
        if case .object(let running)? = object["running"],
            let client = running["client"]?.stringValue.flatMap(Self.bytes(hex:)),
            let id = running["requestId"]?.stringValue.flatMap(Self.bytes(hex:))
        {
            self.recoveredTurnKey = RequestKey(client: client, id: id)
        }
        if state == .ended { endedAt = now }
    }

    /// A fingerprint as 32 hex digits (its high word, then its low word).
    static func hex(_ fingerprint: BodyFingerprint) -> String {
        [fingerprint.high, fingerprint.low].map { word in
            let digits = String(word, radix: 16)
            return String(repeating: "0", count: 16 - digits.count) + digits
        }.joined()
    }

    static func fingerprint(hex: String) -> BodyFingerprint? {
        guard hex.utf8.count == 32, let high = UInt64(hex.prefix(16), radix: 16),
            let low = UInt64(hex.suffix(16), radix: 16)
        else { return nil }
        return BodyFingerprint(high: high, low: low)
    }

    static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 15)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    static func bytes(hex: String) -> [UInt8]? {
        let utf8 = Array(hex.utf8)
        guard utf8.count % 2 == 0 else { return nil }
        func nibble(_ c: UInt8) -> UInt8? {
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
            default: nil
            }
        }
        var out: [UInt8] = []
        out.reserveCapacity(utf8.count / 2)
        var index = 0
        while index < utf8.count {
            guard let high = nibble(utf8[index]), let low = nibble(utf8[index + 1]) else { return nil }
            out.append(high << 4 | low)
            index += 2
        }
        return out
    }
}
