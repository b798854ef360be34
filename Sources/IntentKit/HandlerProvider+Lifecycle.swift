public import ConciergeJSON

/// The result of running an intent's lifecycle without a broker: the last phase run and its output.
public struct LifecycleResult: Sendable {
    /// The last phase that ran (the one that stopped the lifecycle, or `handle`).
    public var phase: IntentPhase
    /// That phase's output.
    public var output: JobOutput

    /// Creates a result.
    public init(phase: IntentPhase, output: JobOutput) {
        self.phase = phase
        self.output = output
    }

    /// The final Interaction (or error object) as JSON.
    public var json: JSONValue? { output.json }
}

extension HandlerProvider {
    /// Runs resolve, then confirm, then handle, as the broker's `lifecycle` phase does, passing each phase's output
    /// body to the next and stopping at the first outcome that is not ``JobOutcome/continue`` (``JobOutcome/stop``,
    /// ``JobOutcome/error``, or ``JobOutcome/cancelled`` when the calling task is cancelled and a handler stops
    /// for it, as the broker stops a cancelled lifecycle). For tests and tools that want handler behaviour without a
    /// broker or worker.
    public func runLifecycle(intentType: String, body: [UInt8], context: HandlerContext = HandlerContext()) async
        -> LifecycleResult
    {
        var body = body
        var last = LifecycleResult(phase: .resolve, output: JobOutput(outcome: .continue, body: body))
        var next: IntentPhase? = IntentPhase.lifecycle.firstJob
        while let phase = next {
            let output = await run(intentType: intentType, phase: phase, body: body, context: context)
            last = LifecycleResult(phase: phase, output: output)
            guard output.outcome == .continue else { break }
            body = output.body
            next = phase.next
        }
        return last
    }

    /// Runs the whole lifecycle of `intent` (see ``runLifecycle(intentType:body:context:)``).
    public func runLifecycle<I: Intent>(_ intent: I, context: HandlerContext = HandlerContext()) async
        -> LifecycleResult
    {
        let body = JSONValue.object(["intent": intent.jsonValue]).serialized()
        return await runLifecycle(intentType: I.intentType, body: body, context: context)
    }

    /// Runs one phase of `intent` given as a typed value, with a body of just `{"intent": ...}`.
    public func run<I: Intent>(_ intent: I, phase: IntentPhase, context: HandlerContext = HandlerContext()) async
        -> JobOutput
    {
        let body = JSONValue.object(["intent": intent.jsonValue]).serialized()
        return await run(intentType: I.intentType, phase: phase, body: body, context: context)
    }
}
