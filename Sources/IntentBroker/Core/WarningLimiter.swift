/// Rate-limits warnings per peer and kind: the first of a kind from a peer is logged at once, later ones at most once
/// per interval, each logged line saying how many were not logged since the previous one. Every event is still
/// counted in ``BrokerStatistics``; only the log lines are limited, so one misbehaving peer cannot flood the log.
///
/// Bounded: at most ``capacity`` (peer, kind) pairs are tracked; past it, pairs whose interval has ended are dropped,
/// and if none has, the new pair shares one overflow slot for its kind.
struct WarningLimiter {
    enum Kind: Hashable {
        case strayResult
        case malformedWorkerMessage
        case malformedClientMessage
        case workerUnreachable
        case workerReregistered
        case definitionMismatch
        case forbidden
    }

    private struct Key: Hashable {
        let peer: [UInt8]
        let kind: Kind
    }

    private struct Window {
        var loggedAt: UInt64
        var suppressed: Int
    }

    let interval: UInt64
    let capacity: Int
    private var windows: [Key: Window] = [:]

    init(interval: UInt64, capacity: Int = 1024) {
        self.interval = interval
        self.capacity = capacity
    }

    /// nil: do not log this one (it is counted as suppressed); else log it, noting how many were not logged before it.
    mutating func allow(_ kind: Kind, peer: [UInt8], now: UInt64) -> Int? {
        var key = Key(peer: peer, kind: kind)
        if windows[key] == nil, windows.count >= capacity {
            windows = windows.filter { now < $0.value.loggedAt &+ interval }
            if windows.count >= capacity { key = Key(peer: [], kind: kind) }
        }
        guard let window = windows[key] else {
            windows[key] = Window(loggedAt: now, suppressed: 0)
            return 0
        }
        guard now >= window.loggedAt &+ interval else {
            windows[key]?.suppressed += 1
            return nil
        }
        windows[key] = Window(loggedAt: now, suppressed: 0)
        return window.suppressed
    }

    /// Pairs tracked (for tests).
    var trackedCount: Int { windows.count }
}
