import Foundation

/// Runs a socket loop on a thread of its own, off Swift's cooperative pool.
///
/// libzmq sockets must stay on one thread and their loops block in `zmq_poll`, so every long-running loop in
/// Concierge (broker, worker, client, pool control) runs this way and is stopped by a flag plus an ``EventFD``.
public enum SocketThread {
    /// Starts `body` on a new thread named `name` and returns when it does.
    public static func run(name: String, _ body: @escaping @Sendable () -> Void) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let thread = Thread {
                body()
                continuation.resume()
            }
            thread.name = name
            thread.start()
        }
    }

    /// Starts `body` on a new thread named `name` without waiting for it.
    public static func start(name: String, _ body: @escaping @Sendable () -> Void) {
        let thread = Thread(block: body)
        thread.name = name
        thread.start()
    }
}
