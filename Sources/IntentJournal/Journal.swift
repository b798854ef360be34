/// A durable record of the broker's requests, stored endings, idempotency records and conversations.
///
/// The broker calls a journal from the one thread that runs its loop: ``recover()`` once before it binds its
/// sockets, then ``commit(_:)`` once per batch, before it performs the batch's actions. Implementations are
/// `Sendable` (they lock internally), so a journal can be handed to that thread and its ``statistics`` read from
/// another (a metrics endpoint).
public protocol Journal: AnyObject, Sendable {
    /// Everything the journal holds: the open requests, the stored results, the idempotency records, the
    /// conversations and the next request id.
    func recover() throws(JournalError) -> JournalState

    /// Writes `operations` in one transaction, in order: when it returns, all of them are recorded (and durable
    /// under ``JournalSync/everyCommit``); when it throws, none is. An empty array does nothing.
    func commit(_ operations: [JournalOperation]) throws(JournalError)

    /// Forces earlier commits to disk if the sync interval (``JournalSync/interval(_:)``) has passed since the last
    /// time. ``commit(_:)`` does this by itself; the broker also calls it from its loop's timer, so that the last
    /// commits before a quiet period reach the disk within the interval. Does nothing under
    /// ``JournalSync/everyCommit``.
    func syncIfDue() throws(JournalError)

    /// Forces every commit to disk (if the policy had not yet) and closes the journal (idempotent). A closed
    /// journal throws on ``recover()`` and ``commit(_:)``.
    func close()

    /// Two secret random numbers the journal was created with: the keys of the broker's body fingerprints, so that
    /// idempotency records read back compare equal to the fingerprints of retries after a restart.
    var fingerprintSeeds: [UInt64] { get }

    /// Commit counts and latencies since the journal was opened.
    var statistics: JournalStatistics { get }

    /// Checks that this journal can still be written by this broker (PostgreSQL: the connection is up and holds the
    /// leader lock); throws `journal-unavailable` if not. A local file has nothing to check.
    func checkLeadership() throws(JournalError)
}

extension Journal {
    public func checkLeadership() throws(JournalError) {}
}
