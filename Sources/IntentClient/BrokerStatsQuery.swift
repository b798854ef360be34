public import IntentWire
public import ZeroMQ

/// Asks a broker's backend for its STATS once (`Schemas/PROTOCOL.md` section 5.14): its queues, its workers, and
/// the intent definitions they announced (section 5.16). For tools (`concierge intents`, `concierge send --check`)
/// that want the broker's view once, not a stream of it.
public enum BrokerStatsQuery {
    /// Why no STATS came back.
    public struct Failure: Error, Sendable, CustomStringConvertible {
        public let message: String
        public var description: String { message }
    }

    /// Sends STATS to `endpoint` (a broker's backend; with CURVE, `curve` holds a worker key) and waits up to
    /// `timeout` for the answer. Blocks the calling thread.
    public static func ask(
        _ endpoint: String, curve: CurveClientKeys? = nil, timeout: Duration = .seconds(2)
    ) throws(Failure) -> BrokerStats {
        let context = ZMQContext()
        defer { context.terminate() }
        let body: [UInt8]
        do {
            let socket = try ZMQSocket(context: context, type: .dealer)
            defer { socket.close() }
            try socket.setOption(.linger, 0)
            if let curve { try socket.makeCurveClient(curve) }
            try socket.connect(endpoint)
            var sink = ZMQWaitingSink(socket)
            guard try WorkerMessageEncoder.statsQuery(into: &sink, version: 4) else {
                throw Failure(message: "cannot send STATS to \(endpoint)")
            }
            let deadline =
                MonotonicTime.now() + UInt64(timeout.components.seconds) * 1_000_000_000
                + UInt64(timeout.components.attoseconds / 1_000_000_000)
            var poller = ZMQPoller()
            poller.add(socket)
            while true {
                let now = MonotonicTime.now()
                guard deadline > now else {
                    throw Failure(
                        message:
                            "no answer to STATS from \(endpoint) within \(timeout) (is a broker's backend there, and "
                            + "does it need CURVE?)")
                }
                guard try poller.poll(timeoutMilliseconds: Int((deadline - now) / 1_000_000) + 1) > 0,
                    let message = try socket.receiveMultipart(dontWait: true)
                else { continue }
                guard let answer = BrokerMessageDecoder().statsAnswer(message) else {
                    if let signature = message.first, signature.starts(with: Array("CIPC".utf8)) {
                        // The broker's client endpoint answers in CIP/Client: the usual mix-up of the two ports.
                        throw Failure(
                            message:
                                "\(endpoint) is a broker's client endpoint (it answered in CIP/Client); STATS, and with "
                                + "it the served definitions, come from its worker endpoint: the broker's --backend "
                                + "(the quick start's is tcp://127.0.0.1:5556)")
                    }
                    let words = message.dropFirst().prefix(3).map { String(decoding: $0.prefix(80), as: UTF8.self) }
                    throw Failure(message: "\(endpoint) answered STATS with \(words)")
                }
                body = answer
                break
            }
        } catch let failure as Failure {
            throw failure
        } catch {
            throw Failure(message: "cannot ask \(endpoint) for STATS: \(error)")
        }
        do {
            return try BrokerStats(parsing: body)
        } catch {
            throw Failure(message: "unreadable STATS answer from \(endpoint): \(error)")
        }
    }
}
