import IntentClient
import Synchronization

/// Bounds how long a request waits for its first reply when no broker answers (Docs/GATEWAY.md, "When the broker is
/// away"): at its deadline, a request with no reply yet is answered `unavailable` (503, `Retry-After`) if the
/// gateway has no broker connection; with one, the broker's own deadline rule sends progress, and the request is
/// looked at again every ``recheck`` until it has a reply or the connection is gone.
///
/// One task for the whole gateway sweeps every ``tick``: a request costs an append under a lock, not a timer.
/// Requests wait in one first-in-first-out queue per distinct wait (a deadline's milliseconds), so each queue is in
/// expiry order.
final class DeadlineSweeper: Sendable {
    /// How often the sweeper looks (the bound's precision).
    static let tick: Duration = .milliseconds(20)
    /// After the deadline, how often a request whose broker is connected is looked at again.
    static let recheck: Duration = .milliseconds(500)
    /// After this long past its deadline a request with no reply is answered `unavailable` even with a connection
    /// (a broker that neither answers nor goes silent).
    static let limit: Duration = .seconds(60)

    fileprivate struct Entry {
        var request: TrackedRequest
        var expiry: ContinuousClock.Instant
        var giveUp: ContinuousClock.Instant
        var client: ConciergeClient
    }

    fileprivate struct Queue {
        var entries: [Entry] = []
        var head = 0

        mutating func take(due now: ContinuousClock.Instant, into due: inout [Entry]) {
            while head < entries.count, entries[head].expiry <= now {
                due.append(entries[head])
                head += 1
            }
            if head == entries.count {
                entries.removeAll(keepingCapacity: entries.count < 4096)
                head = 0
            } else if head > 1024 && head * 2 > entries.count {
                entries.removeFirst(head)
                head = 0
            }
        }
    }

    private let queues = Mutex<[Duration: Queue]>([:])

    /// Watches `request`, sent on `client`, from now: its first reply is due within `wait`.
    func watch(_ request: TrackedRequest, on client: ConciergeClient, wait: Duration) {
        let now = ContinuousClock.now
        let entry = Entry(request: request, expiry: now + wait, giveUp: now + wait + Self.limit, client: client)
        queues.withLock { $0[wait, default: Queue()].entries.append(entry) }
    }

    /// Sweeps until the calling task is cancelled.
    func run() async {
        while !Task.isCancelled {
            try? await Task.sleep(for: Self.tick)
            sweep(now: .now)
        }
    }

    /// Answers the requests due at `now`.
    func sweep(now: ContinuousClock.Instant) {
        var due: [Entry] = []
        queues.withLock { queues in
            for key in queues.keys {
                queues[key]!.take(due: now, into: &due)
                if queues[key]!.entries.isEmpty { queues[key] = nil }
            }
        }
        var again: [Entry] = []
        for var entry in due where !entry.request.hasReply {
            if !entry.client.isConnected || now >= entry.giveUp {
                entry.request.unavailable()
            } else {
                entry.expiry = now + Self.recheck
                again.append(entry)
            }
        }
        guard !again.isEmpty else { return }
        queues.withLock { $0[Self.recheck, default: Queue()].entries.append(contentsOf: again) }
    }
}
