/// Counters the broker keeps (read with ``Broker/statistics`` after it stops, and logged on shutdown).
public struct BrokerStatistics: Sendable, Equatable {
    public var requestsAccepted = 0
    public var finalReplies = 0
    public var errorReplies = 0
    public var progressReplies = 0
    /// Requests answered `busy` because no worker could start them before their deadline.
    public var shedRequests = 0
    /// Keyed requests attached to the request in flight with the same key.
    public var attachedDuplicates = 0
    /// Keyed requests answered with the stored final reply of their key.
    public var replays = 0
    /// Ended idempotency records dropped before their time because a bound was reached (a retry of one runs again).
    public var idempotencyEvictions = 0
    /// Requests ended `cancelled` by their client's CANCEL.
    public var cancelledRequests = 0
    /// Conversations whose first turn counted (section 4.11), and conversations that ended (any ending).
    public var conversationsStarted = 0
    public var conversationsEnded = 0
    /// Conversation turns, CONVERSATION reads and ENDs refused (a bad answer, an unknown conversation, ...).
    public var refusedTurns = 0
    /// Requests read back from the journal at start, accepted by an earlier run and not ended.
    public var requestsRecovered = 0
    /// CANCELs sent to workers (a client's CANCEL of a running job, or the hard limit).
    public var jobsCancelled = 0
    public var jobsDispatched = 0
    /// Phases a worker ran after a `continue` within a chained lifecycle job, without a JOB of their own
    /// (`Schemas/PROTOCOL.md` section 5.15).
    public var chainedPhases = 0
    public var jobsRedispatched = 0
    public var workersRegistered = 0
    public var workersLost = 0
    /// Requests ended `worker-crashed`: their resolve or confirm job was lost with its worker more often than
    /// ``BrokerConfiguration/maxCrashRetries`` allows (section 6.7).
    public var requestsQuarantined = 0
    /// READYs refused because a definition differed from the one served (`definition-mismatch`, section 5.16).
    public var definitionRefusals = 0
    /// REQUESTs and TURNs refused `forbidden` by the permissions file (PROTOCOL.md 13.3).
    public var forbiddenRequests = 0
    /// READYs refused `forbidden`: the worker's identity may not serve one of its types.
    public var forbiddenRegistrations = 0
    /// Permissions put in force while running (``Broker/replacePermissions(_:)``, SIGHUP).
    public var permissionsReplaced = 0
    /// Registered workers that a new permissions file no longer lets serve one of their types: they were drained
    /// (no new jobs; the ones they hold finish).
    public var workersRevoked = 0
    /// Audit log records dropped because the writer could not keep up (``BrokerConfiguration/auditLog``).
    public var auditRecordsDropped = 0
    public var malformedClientMessages = 0
    public var malformedWorkerMessages = 0
    /// Replies that could not be delivered (client gone or its queue full); still available to STATUS.
    public var undeliveredReplies = 0
    /// RESULTs for jobs the broker did not give that worker (counted and dropped).
    public var strayResults = 0
    /// CURVE handshakes the ZAP handler refused (a key not on the allowlist of the socket it connected to).
    public var rejectedHandshakes = 0

    public init() {}
}
