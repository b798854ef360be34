import IntentJournal

/// The core's link to its journal (`Docs/JOURNAL.md`): whether what the core decides must be recorded before it is
/// acted on, whether a commit is being written, and whether the journal can be reached at all.
///
/// The core decides every transition (``BrokerCore`` `+JournalLink`); the shell opens, commits, checks and closes
/// the journal when the core asks (``JournalLinkAction``) and reports back how it went.
struct JournalLink<Body> {
    enum State: Equatable {
        /// No journal: actions are performed as soon as they are decided; nothing is recorded.
        case none
        /// The journal is open and no commit is being written: the next batch is committed at once.
        case idle
        /// A commit is being written: its actions wait for it (``JournalLink/awaiting``), and what the core decides
        /// meanwhile waits too, and goes into the next commit: nothing leaves before it is recorded.
        case committing
        /// A commit or a check failed: nothing more is acted on; at the end of the loop's turn the core decides
        /// between ``unavailable(since:nextAttempt:lastWarning:)`` (a PostgreSQL journal that cannot be reached)
        /// and stopping (anything else: a broker started again on the journal finishes what it holds).
        case failed(JournalError)
        /// The PostgreSQL journal cannot be reached (since `since`, monotonic nanoseconds): requests are refused
        /// `unavailable`, PING is answered, workers are sent away, and the journal is opened again at
        /// `nextAttempt`.
        case unavailable(since: UInt64, nextAttempt: UInt64, lastWarning: UInt64)
        /// Another broker holds the journal: this one binds nothing and waits for the journal's leader lock.
        case standingBy(lastWarning: UInt64)
    }

    var state: State
    /// Whether the journal is a database server that can go away and come back (PostgreSQL), not a file.
    let isShared: Bool
    /// The actions of the commit in flight: performed once it is written, dropped if it fails.
    var awaiting: [BrokerAction<Body>] = []
    /// The requests (and attached duplicates) the commit in flight accepts: if it fails they were never accepted,
    /// and are owed an `unavailable` answer.
    var submitted: [(key: RequestKey, version: UInt8, phase: StaticString)] = []
    /// The last time the journal answered (a commit or a leadership check).
    var lastContact: UInt64 = 0

    /// How often a quiet broker checks that it still holds a PostgreSQL journal.
    static var leadershipCheckInterval: UInt64 { 1_000_000_000 }
    /// How often an unreachable journal is opened again.
    static var reopenInterval: UInt64 { 1_000_000_000 }
    /// How often a journal that stays unreachable is warned about.
    static var warningInterval: UInt64 { 10_000_000_000 }

    var isCommitting: Bool { state == .committing }
    var isUnavailable: Bool {
        if case .unavailable = state { return true }
        return false
    }
    var isStandingBy: Bool {
        if case .standingBy = state { return true }
        return false
    }
    var hasFailed: Bool {
        if case .failed = state { return true }
        return false
    }
    /// Whether the journal is open (idle or committing).
    var isOpen: Bool { state == .idle || state == .committing }

    /// When the link next needs the loop: the next attempt to open an unreachable journal, or the next leadership
    /// check of an open PostgreSQL journal.
    var wakeTime: UInt64 {
        switch state {
        case .unavailable(_, let next, _): next
        case .idle, .committing: isShared ? lastContact &+ Self.leadershipCheckInterval : .max
        default: .max
        }
    }
}

/// What the core asks the shell to do with the journal itself (the frames to send are ``BrokerAction``s).
enum JournalLinkAction: Equatable {
    case none
    /// Force commits to disk if the sync policy is due, and with `checkLeadership` ask PostgreSQL whether this
    /// broker still holds the journal (then report ``BrokerCore/journalAnswered(now:)`` or
    /// ``BrokerCore/journalFailed(_:now:)``).
    case sync(checkLeadership: Bool)
    /// Close the journal and its writer: it cannot be reached; the core refuses work meanwhile.
    case close
    /// Open the journal again and recover from it (then report ``BrokerCore/journalOpened(now:)`` before recovery,
    /// or ``BrokerCore/journalOpenFailed(_:now:)``).
    case reopen
    /// Wait a second, then try to open the journal again (a standby that cannot reach it).
    case retryLater
    /// Another broker took the journal over: close the endpoints and stand by.
    case standBy
    /// Stop the broker: the journal failed, and nothing not recorded is acted on.
    case stop(JournalError)
}

/// What the shell does with the core's next batch (``BrokerCore/nextBatch(actions:entries:)``).
enum BatchStep {
    /// Nothing to do now (nothing decided, or a commit is in flight).
    case wait
    /// Perform the actions given, in order.
    case perform
    /// Commit the entries given and the idempotency records `changed`, in one transaction; the batch's actions
    /// wait in the core until ``BrokerCore/commitFinished(_:into:now:)``.
    case commit(changed: Set<IdempotencyScope>)
}
