import CZeroMQ

/// An error reported by libzmq, carrying the `errno` value it set.
///
/// Codes are stable (they are POSIX/libzmq `errno` values); compare with the static members.
public struct ZMQError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The `errno` value libzmq reported.
    public let code: Int32

    public init(code: Int32) {
        self.code = code
    }

    /// The error libzmq reports for the last failed call on this thread.
    public static var last: ZMQError { ZMQError(code: zmq_errno()) }

    /// Non-blocking operation would block (`EAGAIN`).
    public static let wouldBlock = ZMQError(code: EAGAIN)
    /// A system call was interrupted by a signal (`EINTR`).
    public static let interrupted = ZMQError(code: EINTR)
    /// The context was terminated (`ETERM`).
    public static let terminated = ZMQError(code: ETERM)
    /// A ROUTER with `ZMQ_ROUTER_MANDATORY` could not route to the peer (`EHOSTUNREACH`).
    public static let hostUnreachable = ZMQError(code: EHOSTUNREACH)

    public var description: String {
        "ZMQError(\(code)): \(String(cString: zmq_strerror(code)))"
    }
}

@inline(__always)
func check(_ rc: Int32) throws(ZMQError) {
    if rc == -1 { throw ZMQError.last }
}
