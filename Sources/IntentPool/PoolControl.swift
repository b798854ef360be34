import Foundation
import IntentWire
import ZeroMQ

/// The pool's control endpoint: a REP socket answering one-frame text commands, so an operator can resize a
/// running pool (`concierge pool --control ENDPOINT scale 8`):
/// - `status` -> `{"size": n, "restarts": n, "workers": {"<slot>": pid, ...}}`
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
                let workers = pool.processIdentifiers.sorted { $0.key < $1.key }
                    .map { "\"\($0.key)\":\($0.value)" }.joined(separator: ",")
                reply = Array(#"{"restarts":\#(pool.restarts),"size":\#(pool.size),"workers":{\#(workers)}}"#.utf8)
            case ("scale", 2):
                if let size = Int(command[1]), (0...1024).contains(size) {
                    pool.resize(to: size)
                    reply = Array(#"{"size":\#(size)}"#.utf8)
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
