import IntentJournal
import IntentWire

extension BrokerConfiguration {
    /// Checks the values against the protocol's bounds (section 14): the default deadline within 10...60000 ms and
    /// not above the hard limit, a heartbeat interval and liveness above zero, limits not negative.
    public func validate() throws(BrokerError) {
        func refuse(_ message: String) -> BrokerError { BrokerError(code: .badConfiguration, message: message) }
        guard permissions == nil || curve != nil else {
            throw BrokerError(
                code: .permissionsNeedCurve,
                message:
                    "a permissions file needs CURVE (--curve-secret-key): an identity is a client's or worker's key")
        }
        let deadline = defaultDeadline.milliseconds
        guard defaultDeadline.nanoseconds % 1_000_000 == 0, CIP.deadlineBounds.contains(deadline) else {
            throw refuse(
                "the default deadline must be a whole number of milliseconds within "
                    + "\(CIP.deadlineBounds.lowerBound)...\(CIP.deadlineBounds.upperBound) (got \(defaultDeadline))")
        }
        guard hardLimit >= defaultDeadline else {
            throw refuse("the hard limit (\(hardLimit)) must be at least the default deadline (\(defaultDeadline))")
        }
        guard heartbeatInterval.nanoseconds > 0, heartbeatLiveness >= 1 else {
            throw refuse("the heartbeat interval must be above zero and the liveness at least 1")
        }
        guard maxReplyMargin >= .zero, workerGracePeriod >= .zero, shutdownGracePeriod >= .zero, resultTTL >= .zero,
            startupGracePeriod >= .zero, shutdownLinger >= .zero, peerWarningInterval >= .zero,
            idempotencyTTL >= .zero, cancelGracePeriod >= .zero
        else {
            throw refuse("durations must not be negative")
        }
        guard maxStoredResults >= 0, maxQueuedRequests >= 0, maxQueuedPerIntentType >= 0, maxBodySize >= 1,
            clientQueueLimit >= 1, maxIdempotencyRecords >= 0, idempotencyMemory >= 0,
            resultsMemory >= 0, maxCrashRetries >= 0
        else {
            throw refuse("limits must not be negative (the body size and client queue at least 1)")
        }
        guard conversationTTL > .zero, maxConversations >= 0, conversationsMemory >= 0,
            (1...100).contains(conversationMaxAsks)
        else {
            throw refuse(
                "conversations need a time to live above zero, bounds that are not negative, and 1 to 100 asks")
        }
        if standby, !(journalPath.map(JournalLocation.isPostgres) ?? false) {
            throw refuse("a standby needs a PostgreSQL journal (postgres://…) shared with the active broker")
        }
    }
}
