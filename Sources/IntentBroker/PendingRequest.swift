import IntentWire
import ZeroMQ

/// Identifies a request: the client connection's routing id plus the caller-chosen request id.
struct RequestKey: Hashable {
    let client: [UInt8]
    let id: [UInt8]
}

/// A request the broker has accepted and not yet answered finally.
final class PendingRequest {
    enum State { case queued, running, done }

    let key: RequestKey
    let intentType: Int
    let requested: RequestPhase
    /// The job phase now queued or running.
    var phase: RequestPhase
    /// Input of the current job (the previous phase's output in a lifecycle). Released when done.
    var body: ZMQMessage?
    let arrival: UInt64
    let deadline: UInt64
    var state: State = .queued
    var firstReplySent = false
    /// Whether any job of this request was ever given to a worker.
    var started = false
    /// The job id of the current dispatch (a new one on every dispatch, so stale results are recognised).
    var jobID: UInt64 = 0
    weak var worker: WorkerEntry?

    init(key: RequestKey, intentType: Int, requested: RequestPhase, body: ZMQMessage, arrival: UInt64, deadline: UInt64)
    {
        self.key = key
        self.intentType = intentType
        self.requested = requested
        self.phase = requested.firstJob
        self.body = body
        self.arrival = arrival
        self.deadline = deadline
    }
}
