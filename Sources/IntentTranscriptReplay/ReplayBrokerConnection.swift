import ConciergeJSON
public import IntentTranscript
import IntentWire
public import ZeroMQ

/// A live broker as a replay target: each recorded turn is sent again as a `CIPC03` TURN of a new conversation
/// (same turn numbers, the recorded body, a fresh conversation id), and the final or error REPLY is compared with the
/// recorded reply.
///
/// Turn 1 carries the recorded flags but `record` (a replay is not recorded again), so the comparison also ignores
/// the reply bodies' `conversation.id` (the fresh id) and `conversation.recording` (``ignoredPaths``). A conversation
/// still open after the last turn is ended with END.
///
/// Not `Sendable`: one task drives it. Call ``close()`` when done.
public final class ReplayBrokerConnection {
    /// The key paths a broker replay ignores beyond ``TranscriptComparison/alwaysIgnored``.
    public static let ignoredPaths = ["conversation.id", "conversation.recording"]

    /// How long each turn may take to get its final answer.
    public var turnTimeout: Duration = .seconds(60)

    private let context = ZMQContext()
    private let socket: ZMQSocket
    private var requests: UInt64 = 0
    private var closed = false

    /// Connects a DEALER to the broker's frontend `endpoint`, with CURVE when `curve` is given (the replayed
    /// conversations then belong to that key).
    /// - Throws: ``ReplayTargetError`` `io` when the socket cannot connect (a malformed endpoint).
    public init(endpoint: String, curve: CurveClientKeys? = nil) throws(ReplayTargetError) {
        do {
            socket = try ZMQSocket(context: context, type: .dealer)
            try socket.setOption(.linger, 0)
            if let curve { try socket.makeCurveClient(curve) }
            try socket.connect(endpoint)
        } catch {
            throw ReplayTargetError(code: .io, message: "cannot connect to \(endpoint): \(error)")
        }
    }

    deinit { close() }

    /// Closes the socket.
    public func close() {
        guard !closed else { return }
        closed = true
        socket.close()
        context.terminate()
    }

    /// Replays `transcript`'s turns as a new conversation and compares each reply.
    /// - Throws: ``ReplayTargetError`` `no-answer` when a turn gets no final answer in time, `protocol-error` for an
    ///   answer the codec refuses, `io` when sending fails.
    public func replay(_ transcript: Transcript, ignoring paths: [String] = []) async throws(ReplayTargetError)
        -> TranscriptReplayReport
    {
        let conversation = "replay-" + String(UInt64.random(in: 0...UInt64.max), radix: 16)
        var flags: ClientTurn.Flags = []
        if transcript.start.flags.contains("confirm") { flags.insert(.confirm) }
        var ended = false
        do {
            let report = try await transcript.replayTurns(ignoring: Self.ignoredPaths + paths) { turn in
                let answer = try await send(turn, conversation: conversation, flags: turn.turn == 1 ? flags : [])
                if answer.body["conversation"]?["state"]?.stringValue == "ended" { ended = true }
                return answer
            }
            if !ended { await end(conversation) }
            return report
        } catch let error as ReplayTargetError {
            await end(conversation)
            throw error
        } catch {
            throw ReplayTargetError(code: .io, message: "\(error)")
        }
    }

    /// Sends one TURN and waits for its final or error REPLY (progress replies are skipped).
    private func send(_ turn: TranscriptRecord.Turn, conversation: String, flags: ClientTurn.Flags)
        async throws(ReplayTargetError) -> TranscriptReplyAnswer
    {
        requests += 1
        let requestID = Array("replay-\(requests)".utf8)
        do {
            var sink = ZMQWaitingSink(socket)
            _ = try ClientMessageEncoder.turn(
                into: &sink, requestID: requestID, conversationID: Array(conversation.utf8), turn: turn.turn,
                deadlineMilliseconds: nil, body: .bytes(turn.sent.serialized()), flags: flags)
        } catch {
            throw ReplayTargetError(code: .io, message: "cannot send turn \(turn.turn): \(error)")
        }
        let end = ContinuousClock.now + turnTimeout
        while ContinuousClock.now < end {
            if let answer = try receive(answering: requestID) { return answer }
            try? await Task.sleep(for: .milliseconds(1))  // polling interval: one turn at a time
        }
        throw ReplayTargetError(code: .noAnswer, message: "no final answer to turn \(turn.turn) within \(turnTimeout)")
    }

    /// The final answer to `requestID` if one has come; other messages are dropped.
    private func receive(answering requestID: [UInt8]) throws(ReplayTargetError) -> TranscriptReplyAnswer? {
        let frames: [[UInt8]]?
        do {
            frames = try socket.receiveMultipart(dontWait: true)
        } catch {
            throw ReplayTargetError(code: .io, message: "cannot receive: \(error)")
        }
        guard let frames else { return nil }
        let decoded: (id: [UInt8], kind: BrokerReply.Kind, status: String, phase: String, body: [UInt8])
        do {
            decoded = try BrokerReplyDecoder().decode(frames) { reply in
                (
                    Array(reply.requestID), reply.kind, reply.status.name.description,
                    String(decoding: reply.phase, as: UTF8.self), Array(reply.body)
                )
            }
        } catch {
            throw ReplayTargetError(code: .protocolError, message: "the broker sent a bad answer: \(error)")
        }
        guard decoded.kind == .reply, decoded.id == requestID, decoded.status != "progress" else { return nil }
        let body = (try? JSONValue.parse(decoded.body)) ?? .string(String(decoding: decoded.body, as: UTF8.self))
        return TranscriptReplyAnswer(status: decoded.status, phase: decoded.phase, body: body)
    }

    /// Ends a conversation left open (its answer is not waited for long).
    private func end(_ conversation: String) async {
        var sink = ZMQWaitingSink(socket)
        _ = try? ClientMessageEncoder.end(into: &sink, conversationID: Array(conversation.utf8))
        let end = ContinuousClock.now + .milliseconds(500)
        while ContinuousClock.now < end {
            if let frames = try? socket.receiveMultipart(dontWait: true),
                frames.count > 1, frames[1].withUnsafeBytes({ CIP.Broker.conversation.matches($0) })
            {
                return
            }
            try? await Task.sleep(for: .milliseconds(1))
        }
    }
}
