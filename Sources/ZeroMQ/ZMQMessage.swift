import CZeroMQ

/// One ZeroMQ message frame owned by Swift: the underlying `zmq_msg_t` lives on the heap and is closed once,
/// when the last reference goes away.
///
/// Sending a ``ZMQMessage`` with ``ZMQSocket/send(_:more:)`` sends a libzmq copy (reference-counted for large
/// frames, so no body bytes are copied) and leaves this message intact, so it can be sent again (re-dispatch).
public final class ZMQMessage: @unchecked Sendable {
    let pointer: UnsafeMutablePointer<zmq_msg_t>

    /// An empty message.
    public init() {
        pointer = .allocate(capacity: 1)
        zmq_msg_init(pointer)
    }

    /// A message holding a copy of `bytes`.
    public init(bytes: some Collection<UInt8>) {
        pointer = .allocate(capacity: 1)
        zmq_msg_init_size(pointer, bytes.count)
        let destination = UnsafeMutableRawBufferPointer(start: zmq_msg_data(pointer), count: bytes.count)
        destination.copyBytes(from: bytes)
    }

    /// A message holding the UTF-8 bytes of `string`.
    public convenience init(string: String) {
        self.init(bytes: Array(string.utf8))
    }

    /// Takes over the content of `source` (which is left empty), without copying bytes.
    init(moving source: UnsafeMutablePointer<zmq_msg_t>) {
        pointer = .allocate(capacity: 1)
        zmq_msg_init(pointer)
        zmq_msg_move(pointer, source)
    }

    deinit {
        zmq_msg_close(pointer)
        pointer.deallocate()
    }

    /// Number of bytes in the frame.
    public var count: Int { zmq_msg_size(pointer) }

    /// Calls `body` with the frame's bytes (valid only during the call).
    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try body(UnsafeRawBufferPointer(start: zmq_msg_data(pointer), count: zmq_msg_size(pointer)))
    }

    /// A copy of the frame's bytes.
    public var bytes: [UInt8] { withUnsafeBytes { Array($0) } }

    /// The frame decoded as UTF-8 (invalid sequences are repaired).
    public var string: String { withUnsafeBytes { String(decoding: $0, as: UTF8.self) } }
}
