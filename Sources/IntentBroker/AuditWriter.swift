import IntentWire
import Synchronization
import ZeroMQ

#if canImport(Glibc)
    import Glibc
#endif

/// Writes the audit log (`--audit-log`) on a thread of its own, so that a slow disk or a full pipe never stalls the
/// broker's loop: the loop hands over records (``submit(_:)``, one lock per batch), the thread turns them into JSON
/// lines and writes them. At most ``capacity`` records wait; past it new ones are dropped and counted
/// (``dropped``), never the loop blocked.
final class AuditWriter: Sendable {
    private struct State {
        var records: [AuditRecord] = []
        var dropped = 0
        var stopping = false
    }

    /// Where the lines go: a file opened for appending, or standard output (`-`).
    let destination: String
    let capacity: Int
    private let state = Mutex(State())
    private let request = EventFD()
    private let finished = EventFD()

    /// Opens `destination` (created if missing, appended to; `-` is standard output) and starts the thread.
    /// - Throws: ``BrokerError/Code/badConfiguration`` when the file cannot be opened.
    init(destination: String, capacity: Int = 100_000) throws(BrokerError) {
        self.destination = destination
        self.capacity = capacity
        let descriptor: Int32
        if destination == "-" {
            descriptor = STDOUT_FILENO
        } else {
            descriptor = open(destination, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o640)
            guard descriptor >= 0 else {
                throw BrokerError(
                    code: .badConfiguration,
                    message: "cannot open the audit log \(destination): \(String(cString: strerror(errno)))")
            }
        }
        // Monotonic to Unix time, once: the records carry the loop's monotonic clock.
        var wall = timespec()
        clock_gettime(CLOCK_REALTIME, &wall)
        let offset = (Int64(wall.tv_sec) * 1_000_000_000 + Int64(wall.tv_nsec)) - Int64(clamping: MonotonicTime.now())
        let request = self.request
        let finished = self.finished
        SocketThread.start(name: "concierge-audit") { [self] in
            var poller = pollfd(fd: request.fileDescriptor, events: Int16(POLLIN), revents: 0)
            var buffer: [UInt8] = []
            while true {
                _ = poll(&poller, 1, -1)
                request.drain()
                let (records, stopping) = state.withLock { state in
                    var taken: [AuditRecord] = []
                    swap(&taken, &state.records)
                    return (taken, state.stopping)
                }
                buffer.removeAll(keepingCapacity: true)
                for record in records { buffer += record.jsonLine(wallOffset: offset) }
                Self.writeAll(buffer, to: descriptor)
                if stopping {
                    if descriptor != STDOUT_FILENO { close(descriptor) }
                    finished.signal()
                    return
                }
            }
        }
    }

    /// Hands records over (loop thread); those past ``capacity`` waiting are dropped and counted.
    func submit(_ records: [AuditRecord]) {
        state.withLock { state in
            let room = max(0, capacity - state.records.count)
            if records.count <= room {
                state.records += records
            } else {
                state.records += records.prefix(room)
                state.dropped += records.count - room
            }
        }
        request.signal()
    }

    /// Records dropped because too many were waiting.
    var dropped: Int { state.withLock { $0.dropped } }

    /// Writes what is waiting, closes the file and ends the thread (waits for it).
    func stop() {
        state.withLock { $0.stopping = true }
        request.signal()
        var poller = pollfd(fd: finished.fileDescriptor, events: Int16(POLLIN), revents: 0)
        while poll(&poller, 1, -1) < 0, errno == EINTR {}
    }

    private static func writeAll(_ bytes: [UInt8], to descriptor: Int32) {
        bytes.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let written = write(descriptor, raw.baseAddress! + offset, raw.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    if errno == EAGAIN {  // a non-blocking standard output that is full: wait for room
                        var ready = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
                        _ = poll(&ready, 1, 1000)
                        continue
                    }
                    return  // a broken destination: these lines are lost, the broker goes on
                }
                offset += written
            }
        }
    }
}
