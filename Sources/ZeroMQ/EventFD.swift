import CZeroMQ

#if canImport(Glibc)
    import Glibc
#endif

/// A Linux `eventfd` used to wake a socket loop from another thread: producers call ``signal()``, the loop
/// polls ``fileDescriptor`` with ``ZMQPoller/add(fileDescriptor:)`` and calls ``drain()`` when it is readable.
public final class EventFD: Sendable {
    public let fileDescriptor: Int32

    public init() {
        fileDescriptor = eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC))
        precondition(fileDescriptor >= 0, "eventfd failed: \(errno)")
    }

    deinit { Glibc.close(fileDescriptor) }

    /// Wakes the loop (safe from any thread; many signals coalesce into one wake-up).
    public func signal() {
        var one: UInt64 = 1
        while write(fileDescriptor, &one, 8) == -1 && errno == EINTR {}
    }

    /// Resets the counter after a wake-up.
    public func drain() {
        var value: UInt64 = 0
        while read(fileDescriptor, &value, 8) == -1 && errno == EINTR {}
    }
}
