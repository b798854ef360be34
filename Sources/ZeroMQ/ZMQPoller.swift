import CZeroMQ

/// A set of sockets and raw file descriptors to wait on with `zmq_poll`.
///
/// Build it once and poll it repeatedly; after ``poll(timeoutMilliseconds:)`` returns, ask
/// ``isReadable(_:)`` for each item index.
///
/// The poller holds the sockets added to it (it polls their raw handles, which must not be freed meanwhile).
public struct ZMQPoller {
    private var items: [zmq_pollitem_t] = []
    private var sockets: [ZMQSocket] = []

    public init() {}

    /// Adds a socket to wait on for input; returns its index.
    @discardableResult
    public mutating func add(_ socket: ZMQSocket) -> Int {
        items.append(zmq_pollitem_t(socket: socket.handle, fd: 0, events: Int16(ZMQ_POLLIN), revents: 0))
        sockets.append(socket)
        return items.count - 1
    }

    /// Adds a raw file descriptor (e.g. an ``EventFD``) to wait on for input; returns its index.
    @discardableResult
    public mutating func add(fileDescriptor: Int32) -> Int {
        items.append(zmq_pollitem_t(socket: nil, fd: fileDescriptor, events: Int16(ZMQ_POLLIN), revents: 0))
        return items.count - 1
    }

    /// Waits until an item is readable or the timeout passes (-1 waits forever). Returns how many items are
    /// readable; 0 on timeout or when interrupted by a signal (`EINTR`).
    @discardableResult
    public mutating func poll(timeoutMilliseconds: Int) throws(ZMQError) -> Int {
        let count = items.count
        let rc = items.withUnsafeMutableBufferPointer { zmq_poll($0.baseAddress, Int32(count), timeoutMilliseconds) }
        if rc == -1 {
            let error = ZMQError.last
            if error == .interrupted { return 0 }
            throw error
        }
        return Int(rc)
    }

    /// Whether item `index` was readable after the last poll.
    public func isReadable(_ index: Int) -> Bool {
        items[index].revents & Int16(ZMQ_POLLIN) != 0
    }
}
