import CZeroMQ

/// The ZeroMQ socket types Concierge uses.
public struct ZMQSocketType: Sendable, Hashable {
    public let rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }

    public static let dealer = ZMQSocketType(rawValue: ZMQ_DEALER)
    public static let router = ZMQSocketType(rawValue: ZMQ_ROUTER)
    public static let req = ZMQSocketType(rawValue: ZMQ_REQ)
    public static let rep = ZMQSocketType(rawValue: ZMQ_REP)
    public static let pair = ZMQSocketType(rawValue: ZMQ_PAIR)
    public static let push = ZMQSocketType(rawValue: ZMQ_PUSH)
    public static let pull = ZMQSocketType(rawValue: ZMQ_PULL)
}
