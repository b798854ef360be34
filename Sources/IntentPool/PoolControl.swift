import ConciergeJSON
import Foundation
import IntentWire
import ZeroMQ

/// The pool's control endpoint: a REP socket answering one-frame text commands, so an operator can resize a
/// running pool (`concierge pool --control ENDPOINT scale 8`):
/// - `status` -> `{"size": n, "restarts": n, "workers": {"<slot>": pid, ...}}`, with `"refused": {"<slot>": name}`
///   when its broker refused workers for good (not restarted: ``WorkerPool/refusedExitStatus``), plus, when the pool asks its broker
///   for STATS, `"broker": {"endpoint", "answered", "jobs_in_progress", "queued"}` and with autoscaling
///   `"autoscale": {"min", "max", "steps", "last_decision"}` in it
/// - `scale N` -> `{"size": N}` (N from 0 to 1024)
/// - anything else -> `{"code": "unknown-command", "message": ...}`
final class PoolControl: @unchecked Sendable {
    private let context = ZMQContext()
    private let socket: ZMQSocket
    private weak var pool: WorkerPool?

    init(endpoint: String, pool: WorkerPool) throws {
        socket = try ZMQSocket(context: context, type: .rep)
        try socket.bind(endpoint)
        self.pool = pool
    }

    func run() async {
        await withTaskCancellationHandler {
            await SocketThread.run(name: "concierge-pool-control") { self.loop() }
        } onCancel: {
            context.shutdown()
        }
    }

    /// Ends the control loop.
    func stop() { context.shutdown() }

    /// `"broker"` in `status`: what the pool learnt from its broker, and its autoscaling state.
    static func json(_ view: PoolAutoscaler.Status) -> JSONValue {
        var object: JSONObject = [
            "endpoint": .string(view.endpoint), "answered": .bool(view.answered),
            "jobs_in_progress": .int(Int64(view.jobsInProgress)), "queued": .int(Int64(view.queued)),
        ]
        if let minimum = view.minimum, let maximum = view.maximum {
            object["autoscale"] = .object([
                "min": .int(Int64(minimum)), "max": .int(Int64(maximum)), "steps": .int(Int64(view.steps)),
                "last_decision": .string(view.lastDecision),
            ])
        }
        return .object(object)
    }

    private func loop() {
        var buffer = ZMQMultipart(capacity: 4)
        var poller = ZMQPoller()
        poller.add(socket)
        while let pool {
            guard (try? poller.poll(timeoutMilliseconds: 200)) != nil else { break }
            guard (try? socket.receive(into: &buffer)) == true else { continue }
            let command = buffer.string(0).split(separator: " ")
            let reply: [UInt8]
            switch (command.first, command.count) {
            case ("status", 1):
                var workers: JSONObject = [:]
                for (slot, pid) in pool.processIdentifiers { workers[String(slot)] = .int(Int64(pid)) }
                var status: JSONObject = [
                    "restarts": .int(Int64(pool.restarts)), "size": .int(Int64(pool.size)), "workers": .object(workers),
                ]
                let refused = pool.refusedSlots
                if !refused.isEmpty {
                    // Slots whose worker the broker refused for good: not restarted (WorkerPool.refusedExitStatus).
                    status["refused"] = .object(
                        JSONObject(refused.map { (String($0.key), JSONValue.string($0.value)) }))
                }
                if let view = pool.brokerView { status["broker"] = Self.json(view) }
                reply = JSONValue.object(status).serialized()
            case ("scale", 2):
                if let size = Int(command[1]), (0...1024).contains(size) {
                    pool.resize(to: size)
                    reply = JSONValue.object(["size": .int(Int64(size))]).serialized()
                } else {
                    reply = WireBody.error(.malformed, "scale takes a size from 0 to 1024")
                }
            default:
                reply = WireBody.error(.unknownCommand, "commands: status, scale N")
            }
            _ = try? socket.send(reply)
        }
        socket.close()
        context.terminate()
    }
}
