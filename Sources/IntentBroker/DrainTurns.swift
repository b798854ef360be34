/// Which of the broker's two sockets its loop reads next while it drains them after a wake-up, and when it pauses to
/// perform the core's actions.
///
/// The sockets take turns, one message each. A socket that had nothing is skipped (an empty receive costs libzmq two
/// system calls: its mailbox's poll and its fork check), but only until the end of the current batch of
/// ``batchSize`` messages: a socket skipped for the rest of a long drain would hold back everything that reached it
/// meanwhile. That was a stall: while one client's burst of 50,000 requests was read, the workers' results waited
/// unread, no worker slot came free, and every other client's request waited for the end of the burst (100–200 ms;
/// PROFILES.md, "A flood does not hold the other socket back").
struct DrainTurns {
    enum Side {
        case frontend
        case backend
    }

    /// Messages between two pauses of the drain (the core's actions are performed, empty sockets asked again).
    static let batchSize = 64

    private var budget: Int
    private var frontendEmpty = false
    private var backendEmpty = false

    /// At most `budget` turns (each reading up to one message per socket).
    init(budget: Int = 50_000) {
        self.budget = budget
    }

    /// Whether to ask `side` for a message in this turn.
    func shouldRead(_ side: Side) -> Bool {
        switch side {
        case .frontend: !frontendEmpty
        case .backend: !backendEmpty
        }
    }

    /// `side` had nothing: skip it until the batch ends.
    mutating func foundEmpty(_ side: Side) {
        switch side {
        case .frontend: frontendEmpty = true
        case .backend: backendEmpty = true
        }
    }

    /// Ends a turn. False when the drain is over (both sockets empty, or the budget spent).
    mutating func endTurn() -> Bool {
        if frontendEmpty && backendEmpty { return false }
        budget -= 1
        if isBatchEnd {
            frontendEmpty = false
            backendEmpty = false
        }
        return budget > 0
    }

    /// Whether the turn just ended closed a batch: time to perform the core's actions.
    var isBatchEnd: Bool { budget % Self.batchSize == 0 }

    /// Whether the turn just ended closed two batches: time to fire the timers that fell due.
    var isTimerCheck: Bool { budget % (2 * Self.batchSize) == 0 }
}
