import CZeroMQ

/// One ZeroMQ message frame owned by Swift: the underlying `zmq_msg_t` lives on the heap and is closed once,
/// when the last reference goes away.
///
/// Sending a ``ZMQMessage`` with ``ZMQSocket/send(_:more:)`` sends a libzmq copy (reference-counted for large
/// frames, so no body bytes are copied) and leaves this message intact, so it can be sent again (re-dispatch).
///
/// Return codes: `zmq_msg_init` cannot fail, and `zmq_msg_move`/`zmq_msg_close` fail only with EFAULT (not a valid
/// message), which the `zmq_msg_t` a message owns never is, so those are preconditions; `zmq_msg_init_size`
/// allocates and can fail for a large size (ENOMEM), so ``init(bytes:)`` throws.
public final class ZMQMessage: @unchecked Sendable {
    let pointer: UnsafeMutablePointer<zmq_msg_t>

    /// An empty message.
    public init() {
        pointer = .allocate(capacity: 1)
        Self.initialize(pointer)
    }

    /// A message holding a copy of `bytes`; throws what `zmq_msg_init_size` reports (ENOMEM when the frame cannot
    /// be allocated).
    public init(bytes: some Collection<UInt8>) throws(ZMQError) {
        let count = bytes.count
        let pointer = UnsafeMutablePointer<zmq_msg_t>.allocate(capacity: 1)
        guard zmq_msg_init_size(pointer, count) == 0 else {
            // A failed init leaves nothing to close.
            let error = ZMQError.last
            pointer.deallocate()
            throw error
        }
        self.pointer = pointer
        let destination = UnsafeMutableRawBufferPointer(start: zmq_msg_data(pointer), count: count)
        destination.copyBytes(from: bytes)
    }

    /// A message holding the UTF-8 bytes of `string`; throws as ``init(bytes:)`` does.
    public convenience init(string: String) throws(ZMQError) {
        try self.init(bytes: Array(string.utf8))
    }

    /// Takes over the content of `source` (which is left empty), without copying bytes.
    init(moving source: UnsafeMutablePointer<zmq_msg_t>) {
        pointer = .allocate(capacity: 1)
        Self.initialize(pointer)
        precondition(zmq_msg_move(pointer, source) == 0, "zmq_msg_move failed: \(ZMQError.last)")
    }

    deinit {
        Self.close(pointer)
        pointer.deallocate()
    }

    /// `zmq_msg_init`, which always returns 0 (checked anyway).
    static func initialize(_ message: UnsafeMutablePointer<zmq_msg_t>) {
        precondition(zmq_msg_init(message) == 0, "zmq_msg_init failed: \(ZMQError.last)")
    }

    /// `zmq_msg_close` of a message this binding initialized (a precondition: it fails only for an invalid one).
    static func close(_ message: UnsafeMutablePointer<zmq_msg_t>) {
        precondition(zmq_msg_close(message) == 0, "zmq_msg_close failed: \(ZMQError.last)")
    }

    /// Number of bytes in the frame.
    public var count: Int { zmq_msg_size(pointer) }

    /// Calls `body` with the frame's bytes (valid only during the call).
    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try body(UnsafeRawBufferPointer(start: zmq_msg_data(pointer), count: zmq_msg_size(pointer)))
    }

    /// A copy of the frame's bytes.
    public var bytes: [UInt8] { withUnsafeBytes { Array($0) } }

    /// A message holding the same bytes in an allocation of their own, for a frame that is kept long.
    ///
    /// A frame libzmq received points into the decoder's shared batch buffer (about 8 KiB, plus room for the
    /// reference counts of the frames cut from it, more than 18 KiB in all), which stays allocated as long as any
    /// frame cut from it lives: one small frame kept for a minute keeps the whole buffer. The copy costs the bytes
    /// plus libzmq's small header. Returns `self` when the copy cannot be allocated (ENOMEM).
    public func compacted() -> ZMQMessage {
        (try? withUnsafeBytes { raw throws(ZMQError) in try ZMQMessage(bytes: raw) }) ?? self
    }

    /// The frame decoded as UTF-8 (invalid sequences are repaired).
    public var string: String { withUnsafeBytes { String(decoding: $0, as: UTF8.self) } }
}
