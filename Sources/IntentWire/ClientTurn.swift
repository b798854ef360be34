/// A TURN of a conversation (`CIPC03` or `CIPC04`, `Schemas/PROTOCOL.md` section 4.11) whose frames passed the decoder's checks.
/// The body is not copied: it stays in frame ``bodyIndex`` of the message, ``bodySize`` bytes.
public struct ClientTurn: Sendable, Hashable {
    /// The index of the body frame (F6).
    public static let bodyIndex = 6

    /// What a turn's flags ask for (F7; meaningful on turn 1).
    public struct Flags: OptionSet, Sendable, Hashable {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }

        /// `record`: record a transcript of the conversation (when the broker keeps transcripts).
        public static let record = Flags(rawValue: 1)
        /// `confirm`: stop at a confirm that answers `ready` and wait for `{"confirm": true}` before handle.
        public static let confirm = Flags(rawValue: 2)

        /// The flags frame: the words, separated by one space (empty for none).
        public var frame: [UInt8] {
            var words: [String] = []
            if contains(.record) { words.append("record") }
            if contains(.confirm) { words.append("confirm") }
            return Array(words.joined(separator: " ").utf8)
        }

        /// Parses a flags frame; nil when it holds a word that is not a flag (or words not separated by one space).
        public init?(frame: some Collection<UInt8>) {
            var flags: Flags = []
            if frame.isEmpty {
                self = flags
                return
            }
            for word in frame.split(separator: UInt8(ascii: " "), omittingEmptySubsequences: false) {
                if word.elementsEqual("record".utf8) {
                    flags.insert(.record)
                } else if word.elementsEqual("confirm".utf8) {
                    flags.insert(.confirm)
                } else {
                    return nil
                }
            }
            self = flags
        }
    }

    /// F2: the request id, 1...255 opaque bytes (its REPLY carries it).
    public let requestID: [UInt8]
    /// F3: the conversation id, 1...255 bytes of printable ASCII (0x21-0x7E), chosen by the client.
    public let conversationID: [UInt8]
    /// F4: the turn's number, from 1.
    public let turn: Int
    /// F5: the deadline in milliseconds; nil (an empty F5) for the broker's default.
    public let deadlineMilliseconds: Int?
    /// The size of the body (F6).
    public let bodySize: Int
    /// F7.
    public let flags: Flags
    /// The client protocol version the TURN came in (3: `CIPC03`, 4: `CIPC04`); its answers use the same.
    public let version: UInt8
    /// The caller's W3C trace context (F8 and F9 of a `CIPC04` TURN); nil for none (and in version 03).
    public let traceContext: TraceContext?

    /// A turn with these fields (the decoder makes them; tests compare them).
    public init(
        requestID: [UInt8], conversationID: [UInt8], turn: Int, deadlineMilliseconds: Int?, bodySize: Int,
        flags: Flags = [], version: UInt8 = 3, traceContext: TraceContext? = nil
    ) {
        self.requestID = requestID
        self.conversationID = conversationID
        self.turn = turn
        self.deadlineMilliseconds = deadlineMilliseconds
        self.bodySize = bodySize
        self.flags = flags
        self.version = version
        self.traceContext = traceContext
    }

    /// The conversation id as a string (it is printable ASCII).
    public var conversationName: String { String(decoding: conversationID, as: UTF8.self) }

    /// Whether `bytes` can be a conversation id: 1 to 255 bytes, each printable ASCII (0x21-0x7E).
    public static func isConversationID(_ bytes: some Collection<UInt8>) -> Bool {
        !bytes.isEmpty && bytes.count <= CIP.maxConversationIDLength && bytes.allSatisfy { $0 >= 0x21 && $0 <= 0x7E }
    }
}
