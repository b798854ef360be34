import CZeroMQ
import Synchronization

/// A libzmq context. Thread-safe: sockets for any thread are created from one context, and ``shutdown()`` and
/// ``terminate()`` may be called from any thread.
///
/// ## Ownership
///
/// Every ``ZMQSocket`` holds its context strongly, so a context lives at least as long as the last socket object
/// made from it. Its `deinit` therefore runs only once every socket is gone, and every socket is closed by then
/// (a socket closes itself in its own `deinit` at the latest): the `deinit` terminates the context and never waits
/// for an open socket. It waits at most for the linger of sockets closed with unsent messages, which is 0 unless
/// a socket raised it (see ``ZMQSocketOption/linger``); code that raises it ends the context with ``terminate()``.
///
/// ``terminate()`` ends the context before its last reference goes. Like `zmq_ctx_term`, it blocks until every
/// socket of the context is closed: close them first (each on the thread that owns it), or call ``shutdown()``
/// so that the loops owning them see ``ZMQError/terminated`` and close them.
public final class ZMQContext: Sendable {
    /// The `void *` libzmq context (immutable; libzmq contexts are thread-safe).
    nonisolated(unsafe) let handle: UnsafeMutableRawPointer
    /// Whether `zmq_ctx_term` was called (or is being called). Guards every use of ``handle`` that may race with it:
    /// libzmq frees the context in `zmq_ctx_term`, so nothing may touch the handle afterwards.
    private let terminated = Mutex(false)

    /// Creates a context with the given number of I/O threads (at least 0).
    public init(ioThreads: Int32 = 1) {
        // A precondition, not an error: `zmq_ctx_new` fails only when the process is out of memory or file
        // descriptors (for the context's mailbox) before a single socket exists; nothing useful can go on.
        guard let handle = zmq_ctx_new() else { fatalError("zmq_ctx_new failed: \(ZMQError.last)") }
        self.handle = handle
        // A precondition: `zmq_ctx_set` fails only with EINVAL, for a negative count (a programming error; callers
        // validate their configuration).
        precondition(ioThreads >= 0, "ZMQContext: ioThreads must be at least 0, not \(ioThreads)")
        let rc = zmq_ctx_set(handle, ZMQ_IO_THREADS, ioThreads)
        precondition(rc == 0, "zmq_ctx_set(ZMQ_IO_THREADS, \(ioThreads)) failed: \(ZMQError.last)")
        // Sockets default to linger 0 in this project; no global knob exists, so sockets set it themselves.
    }

    /// Makes blocking operations on this context's sockets fail with ``ZMQError/terminated`` (and new sockets
    /// fail to open). Any thread; does nothing once the context is terminated.
    public func shutdown() {
        terminated.withLock { terminated in
            guard !terminated else { return }
            // A precondition: `zmq_ctx_shutdown` fails only with EFAULT (not a live context), which the flag rules out.
            let rc = zmq_ctx_shutdown(handle)
            precondition(rc == 0, "zmq_ctx_shutdown failed: \(ZMQError.last)")
        }
    }

    /// Terminates the context; blocks until every socket made from it is closed (see ``ZMQContext``).
    ///
    /// Any thread; idempotent: only the first call terminates, later and concurrent calls return at once.
    public func terminate() {
        let first = terminated.withLock { terminated in
            defer { terminated = true }
            return !terminated
        }
        if first { Self.term(handle) }
    }

    deinit {
        // No other reference exists, so no other thread can hold the lock; no socket is open (see ``ZMQContext``).
        if !terminated.withLock({ $0 }) { Self.term(handle) }
    }

    /// `zmq_ctx_term`, retried on EINTR. Any other failure is EFAULT (not a live context), which the flag rules out:
    /// a precondition.
    private static func term(_ handle: UnsafeMutableRawPointer) {
        while zmq_ctx_term(handle) != 0 {
            let error = ZMQError.last
            precondition(error == .interrupted, "zmq_ctx_term failed: \(error)")
        }
    }

    /// A new libzmq socket of `type` in this context; throws ``ZMQError/terminated`` once the context is
    /// terminated (libzmq itself would read freed memory), else what `zmq_socket` reports (e.g. `EMFILE`).
    func openSocket(type: Int32) throws(ZMQError) -> UnsafeMutableRawPointer {
        // Under the lock, so that `zmq_ctx_term` cannot free the context while `zmq_socket` uses it (and errno is
        // read before anything else can change it).
        let address: Result<Int, ZMQError> = terminated.withLock { terminated in
            guard !terminated else { return .failure(.terminated) }
            guard let socket = zmq_socket(handle, type) else { return .failure(.last) }
            return .success(Int(bitPattern: socket))
        }
        return UnsafeMutableRawPointer(bitPattern: try address.get())!
    }

    /// The libzmq version as (major, minor, patch).
    public static var version: (Int32, Int32, Int32) {
        var major: Int32 = 0
        var minor: Int32 = 0
        var patch: Int32 = 0
        zmq_version(&major, &minor, &patch)
        return (major, minor, patch)
    }

    /// Whether libzmq was built with a capability, e.g. "curve" or "ipc".
    public static func has(_ capability: String) -> Bool {
        zmq_has(capability) == 1
    }
}
