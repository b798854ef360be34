import IntentKit

/// A job's result waiting to be sent as a RESULT: made by the task that ran the job, sent by the worker's loop.
struct FinishedJob: Sendable {
    /// The connection the job came on (``WorkerSession/generation``): a result of an older connection is dropped.
    let generation: Int
    /// The job's id (8 bytes).
    let jobID: [UInt8]
    /// The outcome and body of the RESULT.
    let output: JobOutput
    /// The job's last RESULT: false for a `continue` of a chained job, whose next phase runs next (section 5.15).
    var last = true
}
