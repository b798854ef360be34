import CZeroMQ

#if canImport(Glibc)
    import Glibc
#endif

/// Runs a socket loop on a thread of its own, off Swift's cooperative pool.
///
/// libzmq sockets must stay on one thread and their loops block in `zmq_poll`, so every long-running loop in
/// Concierge (broker, worker, client, pool control) runs this way and is stopped by a flag plus an ``EventFD``.
/// Plain pthreads, so that a worker needs no Foundation (and stays small in memory).
public enum SocketThread {
    /// Starts `body` on a new thread named `name` and returns what it returns, when it does.
    public static func run<Result: Sendable>(
        name: String,
        _ body: @escaping @Sendable () -> Result
    ) async -> Result {
        await withCheckedContinuation { (continuation: CheckedContinuation<Result, Never>) in
            start(name: name) { continuation.resume(returning: body()) }
        }
    }

    /// Starts `body` on a new thread named `name` without waiting for it.
    public static func start(name: String, _ body: @escaping @Sendable () -> Void) {
        final class Box {
            let name: String
            let body: @Sendable () -> Void
            init(name: String, body: @escaping @Sendable () -> Void) {
                self.name = name
                self.body = body
            }
        }
        let box = Unmanaged.passRetained(Box(name: name, body: body)).toOpaque()
        var thread = pthread_t()
        let rc = pthread_create(
            &thread, nil,
            { argument in
                let box = Unmanaged<Box>.fromOpaque(argument!).takeRetainedValue()
                czmq_set_thread_name(box.name)
                box.body()
                return nil
            }, box
        )
        precondition(rc == 0, "pthread_create failed: \(rc)")
        pthread_detach(thread)
    }
}
