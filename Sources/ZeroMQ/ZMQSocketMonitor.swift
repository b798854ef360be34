import CZeroMQ
import Synchronization

/// Watches a socket's connection events (`zmq_socket_monitor`): libzmq publishes them on an inproc PAIR
/// socket that this monitor connects to and reads.
///
/// Like any socket, the monitor belongs to one thread: create it and read it where the watched socket lives.
/// Poll ``socket`` with ``ZMQPoller`` and call ``receive(dontWait:)``, or wait with ``next(timeoutMilliseconds:)``.
/// Close it (or let it go) before the context is terminated.
public final class ZMQSocketMonitor: @unchecked Sendable {
    private static let counter = Atomic<UInt64>(0)

    /// The PAIR socket events arrive on (for polling).
    public let socket: ZMQSocket

    /// Starts monitoring `target` for `events` (set before `target` connects or binds to see every event).
    public init(context: ZMQContext, watching target: ZMQSocket, events: ZMQMonitorEvent.Kind = .all) throws(ZMQError) {
        let number = Self.counter.wrappingAdd(1, ordering: .relaxed).oldValue
        let endpoint = "inproc://zmq-monitor-\(number)"
        try check(zmq_socket_monitor(target.handle, endpoint, events.rawValue))
        socket = try ZMQSocket(context: context, type: .pair)
        do {
            try socket.connect(endpoint)
        } catch {
            socket.close()
            throw error
        }
    }

    deinit { socket.close() }

    /// Closes the monitor's socket (idempotent).
    public func close() { socket.close() }

    /// The next event; nil when none is waiting (`dontWait`) or the receive timed out.
    public func receive(dontWait: Bool = true) throws(ZMQError) -> ZMQMonitorEvent? {
        var buffer = ZMQMultipart(capacity: 2)
        guard try socket.receive(into: &buffer, dontWait: dontWait) else { return nil }
        guard buffer.count == 2, buffer.size(0) == 6 else { return nil }
        let (kind, value) = buffer.withBytes(0) { raw -> (Int32, UInt32) in
            let kind = UInt16(raw[0]) | UInt16(raw[1]) << 8
            let value = UInt32(raw[2]) | UInt32(raw[3]) << 8 | UInt32(raw[4]) << 16 | UInt32(raw[5]) << 24
            return (Int32(kind), value)
        }
        return ZMQMonitorEvent(kind: .init(rawValue: kind), value: value, endpoint: buffer.string(1))
    }

    /// Waits up to `timeoutMilliseconds` for the next event whose kind is in `kinds`, skipping others; nil if
    /// none came in time.
    public func next(_ kinds: ZMQMonitorEvent.Kind = .all, timeoutMilliseconds: Int) throws(ZMQError)
        -> ZMQMonitorEvent?
    {
        let clock = ContinuousClock()
        let end = clock.now.advanced(by: .milliseconds(max(0, timeoutMilliseconds)))
        var poller = ZMQPoller()
        poller.add(socket)
        while true {
            while let event = try receive() {
                if !kinds.intersection(event.kind).isEmpty { return event }
            }
            let left = clock.now.duration(to: end)
            guard left > .zero else { return nil }
            let (seconds, attoseconds) = left.components
            try poller.poll(timeoutMilliseconds: Int(seconds) * 1000 + Int(attoseconds / 1_000_000_000_000_000) + 1)
        }
    }
}
