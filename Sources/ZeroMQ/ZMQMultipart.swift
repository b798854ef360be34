import CZeroMQ

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A reusable receive buffer for multipart messages: a fixed number of `zmq_msg_t` slots allocated once,
/// so a receive loop allocates nothing per frame.
///
/// Frames are valid until the next receive into the same buffer. ``take(_:)`` moves one frame out into a
/// ``ZMQMessage`` (no byte copy) to keep it longer.
public struct ZMQMultipart: ~Copyable {
    let slots: UnsafeMutablePointer<zmq_msg_t>
    let scratch: UnsafeMutablePointer<zmq_msg_t>
    /// Views of the frames, filled by ``withFrames(from:_:)``.
    let views: UnsafeMutablePointer<UnsafeRawBufferPointer>
    /// The most frames kept per message.
    public let capacity: Int
    /// Frames received in the last message (at most ``capacity``).
    public internal(set) var count = 0
    /// Frames received beyond ``capacity`` in the last message (dropped).
    public internal(set) var overflow = 0

    public init(capacity: Int) {
        self.capacity = capacity
        slots = .allocate(capacity: capacity)
        scratch = .allocate(capacity: 1)
        views = .allocate(capacity: capacity)
        views.initialize(repeating: UnsafeRawBufferPointer(start: nil, count: 0), count: capacity)
        for index in 0..<capacity { ZMQMessage.initialize(slots + index) }
        ZMQMessage.initialize(scratch)
    }

    deinit {
        for index in 0..<capacity { ZMQMessage.close(slots + index) }
        ZMQMessage.close(scratch)
        slots.deallocate()
        scratch.deallocate()
        views.deallocate()
    }

    func slot(_ index: Int) -> UnsafeMutablePointer<zmq_msg_t> { slots + index }

    mutating func reset() {
        count = 0
        overflow = 0
    }

    /// The size of frame `index`.
    public func size(_ index: Int) -> Int { zmq_msg_size(slots + index) }

    /// The bytes of frame `index`, valid until the next receive.
    public func withBytes<R>(_ index: Int, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try body(UnsafeRawBufferPointer(start: zmq_msg_data(slots + index), count: zmq_msg_size(slots + index)))
    }

    /// Calls `body` with views of frames `first...` of the last message (no copy, no allocation; valid until the next
    /// receive) and the number of frames dropped after them (``overflow``).
    public func withFrames<R, E: Error>(
        from first: Int = 0,
        _ body: (_ frames: UnsafeBufferPointer<UnsafeRawBufferPointer>, _ dropped: Int) throws(E) -> R
    ) throws(E) -> R {
        let start = min(max(0, first), count)
        for index in start..<count {
            views[index - start] = UnsafeRawBufferPointer(
                start: zmq_msg_data(slots + index), count: zmq_msg_size(slots + index)
            )
        }
        return try body(UnsafeBufferPointer(start: views, count: count - start), overflow)
    }

    /// A copy of frame `index`.
    public func bytes(_ index: Int) -> [UInt8] { withBytes(index) { Array($0) } }

    /// Frame `index` decoded as UTF-8.
    public func string(_ index: Int) -> String { withBytes(index) { String(decoding: $0, as: UTF8.self) } }

    /// Whether frame `index` holds exactly `literal`'s bytes.
    public func equals(_ index: Int, _ literal: StaticString) -> Bool {
        let size = zmq_msg_size(slots + index)
        guard size == literal.utf8CodeUnitCount else { return false }
        return memcmp(zmq_msg_data(slots + index), literal.utf8Start, size) == 0
    }

    /// A metadata property of frame `index` (`zmq_msg_gets`), e.g. `User-Id`, the user id the ZAP handler gave the
    /// peer that sent it; nil when the message has no such property (or the frame was made locally, like a ROUTER's
    /// routing-id frame).
    public func property(_ index: Int, _ name: String) -> String? {
        guard index < count, let value = zmq_msg_gets(slots + index, name) else { return nil }
        return String(cString: value)
    }

    /// Moves frame `index` out into a ``ZMQMessage`` without copying its bytes; the slot becomes empty.
    public func take(_ index: Int) -> ZMQMessage {
        ZMQMessage.moving(slots + index)
    }

    /// A copy of frame `index` in an allocation of its own (``ZMQMessage/compacted()`` without moving the frame out
    /// first), for a frame that is kept long; the slot keeps its frame. Moves the frame out instead when the copy
    /// cannot be allocated (ENOMEM).
    public func takeCompacted(_ index: Int) -> ZMQMessage {
        (try? withBytes(index) { raw throws(ZMQError) in try ZMQMessage.copying(raw) }) ?? take(index)
    }
}
