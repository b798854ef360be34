import CZeroMQ

/// A libzmq socket.
///
/// Sockets are not thread-safe: a socket must be used by one thread at a time (in Concierge, the one
/// thread that runs its loop). It is `@unchecked Sendable` only so that it can be handed to that thread.
/// Every socket sets `ZMQ_LINGER` to 0 on creation (pending messages are dropped on close) unless changed.
///
/// A socket holds its ``context`` strongly, so the context's `deinit` cannot run (and wait for this socket) while
/// the socket object lives; an explicit ``ZMQContext/terminate()`` still waits until the socket is closed. Close a
/// socket with ``close()`` on its thread, or let its last reference go: its `deinit` closes it.
public final class ZMQSocket: @unchecked Sendable {
    /// The raw `void *` socket handle (for polling).
    public let handle: UnsafeMutableRawPointer
    /// The socket's type.
    public let type: ZMQSocketType
    /// The context the socket was made from, kept alive by the socket.
    public let context: ZMQContext
    private var closed = false

    /// Opens a socket of `type` in `context`; throws ``ZMQError/terminated`` if the context is shut down or
    /// terminated.
    public init(context: ZMQContext, type: ZMQSocketType) throws(ZMQError) {
        handle = try context.openSocket(type: type.rawValue)
        self.type = type
        self.context = context
        try setOption(.linger, 0)  // on failure, deinit closes the socket
    }

    deinit { close() }

    /// Closes the socket (idempotent). A closed socket keeps its context alive until the socket object goes.
    public func close() {
        guard !closed else { return }
        closed = true
        // A precondition: `zmq_close` fails only with ENOTSOCK (not a live socket), and this handle is ours and
        // closed once.
        let rc = zmq_close(handle)
        precondition(rc == 0, "zmq_close failed: \(ZMQError.last)")
    }

    // MARK: Endpoints

    public func bind(_ endpoint: String) throws(ZMQError) { try check(zmq_bind(handle, endpoint)) }
    public func connect(_ endpoint: String) throws(ZMQError) { try check(zmq_connect(handle, endpoint)) }
    public func unbind(_ endpoint: String) throws(ZMQError) { try check(zmq_unbind(handle, endpoint)) }
    public func disconnect(_ endpoint: String) throws(ZMQError) { try check(zmq_disconnect(handle, endpoint)) }

    /// The endpoint actually bound last (resolves `tcp://127.0.0.1:*` to the chosen port); empty if none was, or
    /// if the option cannot be read (the socket is closed or its context terminated: `ENOTSOCK`, `ETERM`).
    public var lastEndpoint: String {
        (try? stringOption(.lastEndpoint)) ?? ""
    }

    // MARK: Options

    public func setOption(_ option: ZMQSocketOption, _ value: Int32) throws(ZMQError) {
        var value = value
        try check(zmq_setsockopt(handle, option.rawValue, &value, MemoryLayout<Int32>.size))
    }

    public func setOption(_ option: ZMQSocketOption, int64 value: Int64) throws(ZMQError) {
        var value = value
        try check(zmq_setsockopt(handle, option.rawValue, &value, MemoryLayout<Int64>.size))
    }

    public func setOption(_ option: ZMQSocketOption, bytes: [UInt8]) throws(ZMQError) {
        let rc = bytes.withUnsafeBytes { zmq_setsockopt(handle, option.rawValue, $0.baseAddress, $0.count) }
        try check(rc)
    }

    public func setOption(_ option: ZMQSocketOption, string: String) throws(ZMQError) {
        try setOption(option, bytes: Array(string.utf8))
    }

    public func intOption(_ option: ZMQSocketOption) throws(ZMQError) -> Int32 {
        var value: Int32 = 0
        var size = MemoryLayout<Int32>.size
        try check(zmq_getsockopt(handle, option.rawValue, &value, &size))
        return value
    }

    public func stringOption(_ option: ZMQSocketOption) throws(ZMQError) -> String {
        var buffer = [UInt8](repeating: 0, count: 512)
        var size = buffer.count
        let rc = buffer.withUnsafeMutableBytes { zmq_getsockopt(handle, option.rawValue, $0.baseAddress, &size) }
        try check(rc)
        let end = buffer[..<size].firstIndex(of: 0) ?? size
        return String(decoding: buffer[..<end], as: UTF8.self)
    }

    /// Whether another frame of the current multipart message is waiting (`ZMQ_RCVMORE`); false if the option
    /// cannot be read (the socket is closed or its context terminated), when no frame can be received anyway.
    public var hasMore: Bool { ((try? intOption(.receiveMore)) ?? 0) != 0 }

    /// Readiness flags (`ZMQ_EVENTS`): use after a poll or send to learn whether more can be read; false if the
    /// option cannot be read (the socket is closed or its context terminated).
    public var canReceive: Bool { ((try? intOption(.events)) ?? 0) & Int32(ZMQ_POLLIN) != 0 }

    /// The file descriptor libzmq signals when the socket's readiness may have changed (`ZMQ_FD`), to wait on the
    /// socket as a raw descriptor (``ZMQPoller/add(fileDescriptor:)``), which costs a poll no `ZMQ_EVENTS` check.
    /// It is edge-triggered: once it was readable, receive until nothing is waiting, or the socket may hold messages
    /// while the descriptor stays quiet. Nil if the option cannot be read (the socket is closed or its context
    /// terminated).
    public var readinessFileDescriptor: Int32? {
        var descriptor: Int32 = -1
        var size = MemoryLayout<Int32>.size
        guard zmq_getsockopt(handle, ZMQSocketOption.fileDescriptor.rawValue, &descriptor, &size) == 0 else {
            return nil
        }
        return descriptor
    }

    // MARK: Sending

    /// Sends one frame. Returns `false` if the send would block and `dontWait` is set.
    /// Retries on `EINTR`.
    @discardableResult
    public func send(
        _ bytes: UnsafeRawBufferPointer,
        more: Bool = false,
        dontWait: Bool = true
    ) throws(ZMQError) -> Bool {
        let flags = (more ? ZMQ_SNDMORE : 0) | (dontWait ? ZMQ_DONTWAIT : 0)
        while true {
            if zmq_send(handle, bytes.baseAddress, bytes.count, flags) >= 0 { return true }
            let error = ZMQError.last
            if error == .interrupted { continue }
            if error == .wouldBlock { return false }
            throw error
        }
    }

    @discardableResult
    public func send(_ bytes: [UInt8], more: Bool = false, dontWait: Bool = true) throws(ZMQError) -> Bool {
        let result: Result<Bool, ZMQError> = bytes.withUnsafeBytes { buffer in
            do throws(ZMQError) { return .success(try send(buffer, more: more, dontWait: dontWait)) } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    @discardableResult
    public func send(_ string: StaticString, more: Bool = false, dontWait: Bool = true) throws(ZMQError) -> Bool {
        try send(
            UnsafeRawBufferPointer(start: string.utf8Start, count: string.utf8CodeUnitCount),
            more: more,
            dontWait: dontWait
        )
    }

    @discardableResult
    public func send(_ string: String, more: Bool = false, dontWait: Bool = true) throws(ZMQError) -> Bool {
        try send(Array(string.utf8), more: more, dontWait: dontWait)
    }

    /// Sends a copy of `message` (no byte copy for large frames); `message` itself stays intact.
    @discardableResult
    public func send(_ message: ZMQMessage, more: Bool = false, dontWait: Bool = true) throws(ZMQError) -> Bool {
        var copy = zmq_msg_t()
        // Preconditions: `zmq_msg_init` cannot fail, and `zmq_msg_copy` fails only with EFAULT (not a valid
        // message), which a live ``ZMQMessage`` never is; it shares the content, so it allocates nothing.
        precondition(zmq_msg_init(&copy) == 0, "zmq_msg_init failed: \(ZMQError.last)")
        precondition(zmq_msg_copy(&copy, message.pointer) == 0, "zmq_msg_copy failed: \(ZMQError.last)")
        let flags = (more ? ZMQ_SNDMORE : 0) | (dontWait ? ZMQ_DONTWAIT : 0)
        while true {
            if zmq_msg_send(&copy, handle, flags) >= 0 { return true }  // libzmq now owns the copy
            let error = ZMQError.last
            if error == .interrupted { continue }
            ZMQMessage.close(&copy)
            if error == .wouldBlock { return false }
            throw error
        }
    }

    /// Sends every frame of `frames` as one multipart message. Returns `false` if the first frame would block.
    @discardableResult
    public func send(multipart frames: [[UInt8]], dontWait: Bool = true) throws(ZMQError) -> Bool {
        for (index, frame) in frames.enumerated() {
            let sent = try send(frame, more: index < frames.count - 1, dontWait: dontWait)
            if !sent {
                precondition(index == 0, "a multipart send blocked after its first frame")
                return false
            }
        }
        return true
    }

    // MARK: Receiving

    /// Receives one whole multipart message into `buffer`. Returns `false` when nothing is waiting
    /// (`dontWait`) . Frames past the buffer's capacity are received and dropped, and counted in
    /// ``ZMQMultipart/overflow``. Retries on `EINTR`.
    public func receive(into buffer: inout ZMQMultipart, dontWait: Bool = true) throws(ZMQError) -> Bool {
        buffer.reset()
        var flags = dontWait ? ZMQ_DONTWAIT : 0
        while true {
            let slot = buffer.count < buffer.capacity ? buffer.slot(buffer.count) : buffer.scratch
            while true {
                if zmq_msg_recv(slot, handle, flags) >= 0 { break }
                let error = ZMQError.last
                if error == .interrupted { continue }
                if error == .wouldBlock && buffer.count == 0 && buffer.overflow == 0 { return false }
                throw error
            }
            if buffer.count < buffer.capacity { buffer.count += 1 } else { buffer.overflow += 1 }
            if zmq_msg_more(slot) == 0 { return true }
            flags = 0  // the rest of a multipart message is already here
        }
    }

    /// Receives one multipart message as byte arrays (convenience for tests and cold paths).
    public func receiveMultipart(dontWait: Bool = false) throws(ZMQError) -> [[UInt8]]? {
        var buffer = ZMQMultipart(capacity: 64)
        guard try receive(into: &buffer, dontWait: dontWait) else { return nil }
        return (0..<buffer.count).map { buffer.bytes($0) }
    }
}
