public import IntentKit

/// The job context a test gives handlers: the ``HandlerContext`` fields a broker and worker would fill in, and a
/// ``TestCancellation`` the test controls.
///
/// As with a broker, the idempotency key and the attempt number reach the handle phase only: resolve and confirm
/// jobs carry no key and attempt 1 (``HandlerContext/idempotencyKey``).
///
/// ```swift
/// // The broker runs the handle again after a lost worker: attempt 2 of key "pay-1".
/// let context = TestHandlerContext(idempotencyKey: "pay-1", attempt: 2)
/// let turn = try await context.run(intent, phase: .handle, on: provider)
/// #expect(turn.handle?.code == .success)
/// ```
public struct TestHandlerContext: Sendable {
    /// The job id handlers see (the same for every phase).
    public var jobID: String
    /// The worker name handlers see.
    public var workerName: String
    /// The idempotency key of the handle phase, or nil for a request without one.
    public var idempotencyKey: String?
    /// The attempt number of the handle phase (1 for the first).
    public var attempt: Int
    /// The time from the start of each job to its deadline, or nil for no deadline.
    public var timeLeft: Duration?
    /// The cancellation of every job run with this context.
    public var cancellation: TestCancellation

    /// Creates a context.
    /// - Parameters:
    ///   - idempotencyKey: The idempotency key of the handle phase.
    ///   - attempt: The attempt number of the handle phase.
    ///   - timeLeft: The time from the start of each job to its deadline; nil for none.
    ///   - jobID: The job id handlers see.
    ///   - workerName: The worker name handlers see.
    ///   - cancellation: The cancellation the test controls; a new one by default.
    public init(
        idempotencyKey: String? = nil,
        attempt: Int = 1,
        timeLeft: Duration? = nil,
        jobID: String = "test-job",
        workerName: String = "test-worker",
        cancellation: TestCancellation = TestCancellation()
    ) {
        self.idempotencyKey = idempotencyKey
        self.attempt = attempt
        self.timeLeft = timeLeft
        self.jobID = jobID
        self.workerName = workerName
        self.cancellation = cancellation
    }

    /// The ``HandlerContext`` of a job of `phase` starting now: the key and attempt for `handle` only, the deadline
    /// ``timeLeft`` from now.
    public func handlerContext(for phase: IntentPhase) -> HandlerContext {
        let isHandle = phase == .handle
        return HandlerContext(
            jobID: jobID,
            workerName: workerName,
            phase: phase,
            deadline: timeLeft.map { .now + $0 },
            idempotencyKey: isHandle ? idempotencyKey : nil,
            attempt: isHandle ? attempt : 1
        )
    }

    /// Runs one phase of `intent` (a body of just `{"intent": ...}`) under ``cancellation`` and decodes the output.
    /// - Throws: ``IntentTestingError`` when the output does not decode (see ``IntentTurn/init(phase:output:sent:)``).
    public func run<I: Intent>(_ intent: I, phase: IntentPhase, on provider: HandlerProvider)
        async throws(IntentTestingError) -> IntentTurn<I>
    {
        let body = JSONValue.object(["intent": intent.jsonValue]).serialized()
        let output = await runJob(intentType: I.intentType, phase: phase, body: body, on: provider)
        return try IntentTurn(phase: phase, output: output, sent: intent)
    }

    /// Runs one job under ``cancellation``.
    func runJob(intentType: String, phase: IntentPhase, body: [UInt8], on provider: HandlerProvider) async
        -> JobOutput
    {
        let context = handlerContext(for: phase)
        return await cancellation.run {
            await provider.run(intentType: intentType, phase: phase, body: body, context: context)
        }
    }
}
