import CZeroMQ

/// One ZeroMQ message frame owned by Swift: the underlying `zmq_msg_t` lives on the heap and is closed once,
/// when the last reference goes away.
///
/// Sending a ``ZMQMessage`` with ``ZMQSocket/send(_:more:)`` sends a libzmq copy (reference-counted for large
/// frames, so no body bytes are copied) and leaves this message intact, so it can be sent again (re-dispatch).
///
/// Return codes: `zmq_msg_init` cannot fail, and `zmq_msg_move`/`zmq_msg_close` fail only with EFAULT (not a valid
/// message), which the `zmq_msg_t` a message owns never is, so those are preconditions; `zmq_msg_init_size`
/// allocates and can fail for a large size (ENOMEM), so ``copying(_:)`` throws.
public final class ZMQMessage: ManagedBuffer<Void, UInt64> {
    // A ManagedBuffer keeps the `zmq_msg_t` in the object's own allocation: one malloc per message instead of two
    // (object and frame), on every frame the broker keeps: one allocation less per request on the broker's hot
    // path. Its address is fixed for the object's life.
    // The elements are words (a public superclass cannot name the C type), bound to `zmq_msg_t` once, at creation;
    // words give the pointer alignment zmq.h asks for. A ManagedBuffer subclass cannot declare initializers, hence
    // the factories.
    private static let words = (MemoryLayout<zmq_msg_t>.size + 7) / 8

    /// An empty message.
    public static func empty() -> ZMQMessage {
        let message = unsafeDowncast(create(minimumCapacity: words) { _ in }, to: ZMQMessage.self)
        message.withUnsafeMutablePointerToElements { words in
            initialize(UnsafeMutableRawPointer(words).bindMemory(to: zmq_msg_t.self, capacity: 1))
        }
        return message
    }

    /// A message holding a copy of `bytes`; throws what `zmq_msg_init_size` reports (ENOMEM when the frame cannot
    /// be allocated).
    public static func copying(_ bytes: some Collection<UInt8>) throws(ZMQError) -> ZMQMessage {
        let count = bytes.count
        var content = zmq_msg_t()
        // A failed init leaves nothing to close.
        guard zmq_msg_init_size(&content, count) == 0 else { throw ZMQError.last }
        UnsafeMutableRawBufferPointer(start: zmq_msg_data(&content), count: count).copyBytes(from: bytes)
        return moving(&content)
    }

    /// A message holding the UTF-8 bytes of `string`; throws as ``copying(_:)`` does.
    public static func copying(string: String) throws(ZMQError) -> ZMQMessage {
        try copying(Array(string.utf8))
    }

    /// Takes over the content of `source` (which is left empty), without copying bytes.
    static func moving(_ source: UnsafeMutablePointer<zmq_msg_t>) -> ZMQMessage {
        let message = empty()
        precondition(zmq_msg_move(message.pointer, source) == 0, "zmq_msg_move failed: \(ZMQError.last)")
        return message
    }

    deinit {
        Self.close(pointer)
    }

    /// The message's `zmq_msg_t`, at a fixed address in this object's allocation; use it only while holding the
    /// object.
    var pointer: UnsafeMutablePointer<zmq_msg_t> {
        withUnsafeMutablePointerToElements { UnsafeMutableRawPointer($0).assumingMemoryBound(to: zmq_msg_t.self) }
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
        (try? withUnsafeBytes { raw throws(ZMQError) in try ZMQMessage.copying(raw) }) ?? self
    }

    /// The frame decoded as UTF-8 (invalid sequences are repaired).
    public var string: String { withUnsafeBytes { String(decoding: $0, as: UTF8.self) } }
}
