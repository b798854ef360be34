import IntentWire

/// A job that runs several phases of a lifecycle on one `CIPW03` worker (`Schemas/PROTOCOL.md` section 5.15): the
/// worker answers each phase with a RESULT under the same job id, and runs the next one at once after a `continue`,
/// until the job's last phase. The job keeps its worker's slot until its last RESULT.
struct ChainedJob {
    /// The phase the worker runs now: the one its next RESULT answers.
    var phase: RequestPhase
    /// The last phase the worker may run for this job (F9 of the JOB).
    let lastPhase: RequestPhase

    /// Whether a RESULT with `outcome` for ``phase`` leaves the job running (the worker goes on to the next phase).
    func continues(after outcome: JobOutcome) -> Bool {
        outcome == .continue && phase.order < lastPhase.order
    }
}
