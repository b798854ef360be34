/// A message from the broker as a worker decodes it (`Schemas/PROTOCOL.md` sections 5.7-5.9 and 5.12).
public enum BrokerCommand: Sendable, Hashable {
    /// JOB: run one phase.
    case job(WorkerJob)
    /// HEARTBEAT.
    case heartbeat
    /// DRAIN: the acknowledgement of the worker's DRAIN; no JOB follows.
    case drain
    /// DISCONNECT: register again (or leave, when draining).
    case disconnect
    /// CANCEL (version 02): stop the job with this id (8 bytes) and answer it (section 5.8).
    case cancel(jobID: [UInt8])
    /// ERROR: the broker refused a message of the worker. F2 and F3 as text (empty when missing).
    case error(code: String, message: String)
}
