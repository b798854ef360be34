import IntentWire

/// What the core needs of the broker's configuration, read once when the core is made: the configuration itself, and
/// its durations in nanoseconds (the unit of the core's clock), so that no rule converts a `Duration` per request.
struct CoreSettings: Sendable {
    let configuration: BrokerConfiguration
    /// Whether the broker keeps a journal: what the core decides is recorded before it is acted on.
    let journaling: Bool
    /// ``BrokerConfiguration/heartbeatInterval``, and how long a silent worker lives (times the liveness).
    let heartbeat: UInt64
    let workerExpiry: UInt64
    let defaultDeadline: UInt64
    let hardLimit: UInt64
    let maxReplyMargin: UInt64
    /// ``BrokerConfiguration/workerGracePeriod`` and ``BrokerConfiguration/cancelGracePeriod``.
    let workerGrace: UInt64
    let cancelGrace: UInt64
    /// ``BrokerConfiguration/maxQueueWait`` (UInt64.max when not set).
    let maxQueueWait: UInt64
    /// ``BrokerConfiguration/standingQueueWait`` (nil when not set) and ``BrokerConfiguration/standingQueueInterval``.
    let standingQueueWait: UInt64?
    let standingQueueInterval: UInt64

    /// Whether conversations may be recorded (the broker has a transcript directory).
    let recordsTranscripts: Bool
    /// ``BrokerConfiguration/tracing``: the core tells the shell of the moments spans mark (``TraceEvent``).
    let tracing: Bool
    /// ``BrokerConfiguration/auditLog``: the core makes an ``AuditRecord`` for each request accepted, refused, ended.
    let auditing: Bool

    init(_ configuration: BrokerConfiguration, journaling: Bool) {
        self.configuration = configuration
        recordsTranscripts = configuration.transcriptDirectory != nil
        tracing = configuration.tracing
        auditing = configuration.auditLog != nil
        self.journaling = journaling
        heartbeat = configuration.heartbeatInterval.nanoseconds
        workerExpiry = heartbeat * UInt64(max(1, configuration.heartbeatLiveness))
        defaultDeadline = configuration.defaultDeadline.nanoseconds
        hardLimit = configuration.hardLimit.nanoseconds
        maxReplyMargin = configuration.maxReplyMargin.nanoseconds
        workerGrace = configuration.workerGracePeriod.nanoseconds
        cancelGrace = configuration.cancelGracePeriod.nanoseconds
        maxQueueWait = configuration.maxQueueWait?.nanoseconds ?? .max
        standingQueueWait = configuration.standingQueueWait?.nanoseconds
        standingQueueInterval = configuration.standingQueueInterval.nanoseconds
    }
}
