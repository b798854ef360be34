// concierge-worker: one worker process with the example handlers, and nothing else — no Foundation, no broker or
// pool code — so that each process of a pool stays small in memory. It takes the same options as
// `concierge worker` (both use ConciergeCommandLine's `WorkerProcessOptions`); `concierge pool` and `concierge up`
// run it when it sits next to `concierge`.
//
// It is also the model for a handler author's own worker: a provider, a `Worker`, a `ServiceGroup` (see
// `WorkerProcessOptions.run(provider:)`).
import ArgumentParser
import ConciergeCommandLine
import ConciergeExamples

@main
struct ConciergeWorker: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "concierge-worker",
        abstract:
            "Run one worker with the example handlers (RequestRide, StartWorkout, SendMessage, SendPayment, Echo)."
    )

    @OptionGroup var options: WorkerProcessOptions

    func run() async throws {
        try await options.run(provider: Examples.provider)
    }
}
