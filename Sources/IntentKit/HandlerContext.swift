/// What a handler knows about the job it runs: passed to every phase method instead of globals.
public struct HandlerContext: Sendable {
    /// The job id given by the broker (opaque; for logs).
    public var jobID: String
    /// The name of the worker process running the job.
    public var workerName: String
    /// The phase being run.
    public var phase: IntentPhase
    /// When the request's deadline passes, if it has one. Past it the client has been told the request is still in
    /// progress; a long handle should answer ``HandleCode/inProgress`` well before.
    public var deadline: ContinuousClock.Instant?

    /// Creates a context. The job runner sets ``phase`` to the phase it runs.
    public init(
        jobID: String = "",
        workerName: String = "",
        phase: IntentPhase = .resolve,
        deadline: ContinuousClock.Instant? = nil
    ) {
        self.jobID = jobID
        self.workerName = workerName
        self.phase = phase
        self.deadline = deadline
    }

    /// Creates a context whose deadline is `timeLeft` from now (the broker sends the time left in each JOB).
    public init(jobID: String, workerName: String, phase: IntentPhase, timeLeft: Duration) {
        self.init(jobID: jobID, workerName: workerName, phase: phase, deadline: .now + timeLeft)
    }

    /// The time left until the deadline (negative once it has passed), or nil without a deadline.
    public var timeRemaining: Duration? {
        guard let deadline else { return nil }
        return deadline - .now
    }
}
