import ConciergeJSON
import IntentWire

/// The client's turn numbers, one entry per conversation it talks in (no sockets, no clocks: the rules alone).
///
/// The broker runs turn n + 1 after turn n, attaches a turn sent again while it runs, and sends a turn's stored reply
/// again when it ended: so a turn sent again with the **same number** never runs twice (never a second handle),
/// whatever happened to the first attempt. The client therefore gives each new turn the number after the last one
/// the broker counted, keeps that number for every retry of the turn, and learns the count from the broker: every
/// ending of a turn carries the `"conversation"` object (its `turn`). When a turn's outcome is unknown (the
/// connection was lost, the caller stopped waiting, the broker answered without the object), the next new turn reads
/// the conversation first: sending the old number with a new answer would get the old turn's stored reply.
struct ConversationLedger {
    /// What the client knows of one conversation.
    struct Entry: Equatable {
        /// The number of the last turn the broker counted, as far as the client knows (0: none yet).
        var last = 0
        /// The number of the turn in flight (its retries included).
        var inFlight: Int?
        /// The last turn's outcome is unknown: read the conversation before the next new turn.
        var uncertain = false
        /// The conversation's intent type (for the client's throttle and pushback).
        var intentType: String?
    }

    /// What to do for a new turn.
    enum Plan: Equatable {
        /// Send the turn with this number.
        case send(turn: Int)
        /// Read the conversation first (``learned(_:)``), then ask again.
        case read
    }

    /// Error codes with which the broker refuses a turn before it runs: it changed nothing, so the count is known.
    static let refusals: Set<String> = Set(
        [
            WireErrorCode.badAnswer, .notAsked, .badOption, .turnMismatch, .unknownConversation, .malformed,
            .badRequestID, .badDeadline, .tooLarge, .shuttingDown, .duplicateRequest, .unknownIntent, .busy,
            .unavailable, .unsupportedVersion, .unknownCommand,
        ].map(\.rawValue))

    private(set) var entries: [String: Entry] = [:]

    /// A new turn of conversation `id` (not a retry): turn 1 when `starting`, else the turn after the last one
    /// counted. Throws ``ClientError/Code/turnInFlight`` while a turn of it is in flight.
    mutating func begin(_ id: String, starting: Bool, intentType: String? = nil) throws(ClientError) -> Plan {
        if entries[id]?.inFlight != nil {
            throw ClientError(
                code: .turnInFlight, message: "conversation \(id): a turn is in flight; wait for its ending")
        }
        if starting {
            entries[id] = Entry(last: 0, inFlight: 1, uncertain: false, intentType: intentType)
            return .send(turn: 1)
        }
        guard var entry = entries[id], !entry.uncertain else { return .read }
        let turn = entry.last + 1
        entry.inFlight = turn
        entries[id] = entry
        return .send(turn: turn)
    }

    /// The conversation as the broker described it (a read, or a turn's ending): its count is the broker's.
    mutating func learned(_ state: ConversationState) {
        var entry = entries[state.id] ?? Entry()
        entry.last = state.turn
        entry.uncertain = false
        if !state.intentType.isEmpty { entry.intentType = state.intentType }
        entries[state.id] = entry
    }

    /// The conversation is gone (the broker answered `unknown-conversation` to a read).
    mutating func forget(_ id: String) {
        if entries[id]?.inFlight == nil { entries[id] = nil }
    }

    /// Turn `turn` of conversation `id` ended: with the broker's ending `reply` (final or error), or, with nil, in a
    /// way that leaves its outcome unknown (the connection was lost, the caller stopped waiting).
    mutating func ended(_ id: String, turn: Int, reply: Reply?) {
        guard var entry = entries[id], entry.inFlight == turn else { return }
        entry.inFlight = nil
        if let reply, let state = reply.json?["conversation"].flatMap(ConversationState.init(json:)), state.id == id {
            entries[id] = entry
            learned(state)
            return
        }
        if let reply, reply.status == .final {
            entry.last = turn
            entry.uncertain = false
        } else if let code = reply?.errorCode, Self.refusals.contains(code) {
            entry.uncertain = false
        } else {
            entry.uncertain = true
        }
        entries[id] = entry
    }

    /// The intent type of conversation `id`, if known.
    func intentType(of id: String) -> String? { entries[id]?.intentType }
}
