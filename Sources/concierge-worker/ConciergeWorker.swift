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

#if canImport(Glibc)
    import Glibc
#endif

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

/// The entry point. It parses and runs `ConciergeWorker` as `AsyncParsableCommand.main()` would, but the main
/// thread parks in `pause()` instead of `dispatchMain()`: on Linux `dispatchMain()` ends the main thread with
/// `pthread_exit`, whose forced unwind reads the unwind tables of every frame on the main stack, and that alone kept
/// about 0.5 MiB of `.eh_frame_hdr` and `.eh_frame` resident in every idle worker (Docs/PROFILES.md, "The idle
/// worker"). Nothing in the worker runs on the main actor, so the main queue is never needed.
@main
enum ConciergeWorkerMain {
    static func main() {
        let command: ConciergeWorker
        do {
            command = try ConciergeWorker.parse()
        } catch {
            ConciergeWorker.exit(withError: error)
        }
        // Detached: a task created here would inherit the main actor, whose queue nobody drains.
        Task.detached {
            do {
                try await command.run()
                exit(0)
            } catch {
                ConciergeWorker.exit(withError: error)
            }
        }
        while true { pause() }
    }
}
