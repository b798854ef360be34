import CZeroMQ

/// A libzmq context. Thread-safe: sockets for any thread are created from one context.
///
/// Closing every socket and then calling ``terminate()`` (or dropping the last reference) ends the context.
/// ``shutdown()`` makes blocking calls on the context's sockets return ``ZMQError/terminated`` so that
/// loops owning sockets can notice and close them.
public final class ZMQContext: @unchecked Sendable {
    let handle: UnsafeMutableRawPointer
    private var terminated = false

    /// Creates a context with the given number of I/O threads.
    public init(ioThreads: Int32 = 1) {
        guard let handle = zmq_ctx_new() else { fatalError("zmq_ctx_new failed: \(ZMQError.last)") }
        self.handle = handle
        zmq_ctx_set(handle, ZMQ_IO_THREADS, ioThreads)
        // Sockets default to linger 0 in this project; no global knob exists, so sockets set it themselves.
    }

    /// Makes blocking operations on this context's sockets fail with ``ZMQError/terminated``.
    public func shutdown() {
        zmq_ctx_shutdown(handle)
    }

    /// Terminates the context; blocks until every socket made from it is closed.
    public func terminate() {
        guard !terminated else { return }
        terminated = true
        while zmq_ctx_term(handle) == -1 && zmq_errno() == EINTR {}
    }

    deinit {
        terminate()
    }

    /// The libzmq version as (major, minor, patch).
    public static var version: (Int32, Int32, Int32) {
        var major: Int32 = 0, minor: Int32 = 0, patch: Int32 = 0
        zmq_version(&major, &minor, &patch)
        return (major, minor, patch)
    }

    /// Whether libzmq was built with a capability, e.g. "curve" or "ipc".
    public static func has(_ capability: String) -> Bool {
        zmq_has(capability) == 1
    }
}
