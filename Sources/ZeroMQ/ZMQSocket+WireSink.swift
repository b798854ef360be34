public import IntentWire

/// A socket is where IntentWire's encoders write: each frame is sent at once, without waiting (a full queue refuses
/// a message's first frame, and the encoder then reports the message unsent), and a ``ZMQMessage`` body is sent as
/// a libzmq copy that shares its bytes.
extension ZMQSocket: WireSink {
    public typealias Body = ZMQMessage
    public typealias Failure = ZMQError

    @inlinable
    public func append(_ bytes: UnsafeRawBufferPointer, more: Bool) throws(ZMQError) -> Bool {
        try send(bytes, more: more)
    }

    @inlinable
    public func append(body: ZMQMessage, more: Bool) throws(ZMQError) -> Bool {
        try send(body, more: more)
    }
}

/// A socket as a ``WireSink`` whose sends wait for room in the queue instead of refusing (tools that send one message
/// and wait for its answer).
public struct ZMQWaitingSink: WireSink {
    /// The socket the frames go to.
    public let socket: ZMQSocket

    /// A sink sending to `socket`, waiting when its queue is full.
    public init(_ socket: ZMQSocket) { self.socket = socket }

    public func append(_ bytes: UnsafeRawBufferPointer, more: Bool) throws(ZMQError) -> Bool {
        try socket.send(bytes, more: more, dontWait: false)
    }

    public func append(body: ZMQMessage, more: Bool) throws(ZMQError) -> Bool {
        try socket.send(body, more: more, dontWait: false)
    }
}
