public import ArgumentParser
import IntentWorker

/// How each worker runs jobs (`worker`, `pool`, `up`, and `concierge-worker`).
public struct WorkerOptions: ParsableArguments, Sendable {
    @Option(help: "Jobs each worker runs at once.")
    public var capacity: Int = WorkerConfiguration.defaultCapacity

    @Option(
        help: """
            Where handlers run: `thread` (the worker's socket thread: fastest) or `pool` (Swift's shared pool: for \
            handlers that compute for seconds without suspending).
            """
    )
    public var jobsOn: String = WorkerConfiguration(name: "").jobExecution.rawValue

    @Flag(
        help: """
            Trace: make a span for each phase a handler runs (with `up`, the broker's spans too) and export them \
            over OTLP/HTTP (Swift OTel; the OTEL_* environment variables configure it, Docs/TRACING.md). Off: the \
            handler still sees the request's trace context.
            """
    )
    public var tracing = false

    public init() {}

    public func validate() throws {
        guard (1...1000).contains(capacity) else { throw ValidationError("--capacity takes 1 to 1000") }
        guard WorkerConfiguration.JobExecution(rawValue: jobsOn) != nil else {
            throw ValidationError("--jobs-on takes `thread` or `pool`")
        }
    }

    /// Arguments that pass these options on to a worker process (pools).
    public var workerArguments: [String] {
        ["--capacity", String(capacity), "--jobs-on", jobsOn] + (tracing ? ["--tracing"] : [])
    }
}
