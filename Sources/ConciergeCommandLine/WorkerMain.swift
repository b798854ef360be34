import ArgumentParser
public import IntentKit
import IntentWorker

#if canImport(Glibc)
    import Glibc
#endif

/// The entry point of a worker executable: the command line and environment of `concierge worker` (broker list,
/// name, capacity, `--jobs-on`, CURVE keys, heartbeat, log level and format; see ``WorkerProcessOptions``) around
/// your handlers, in one call.
///
/// ```swift
/// import ConciergeCommandLine
/// import IntentKit
///
/// @main enum PizzaWorker {
///     static func main() {
///         var provider = HandlerProvider()
///         provider.register { OrderPizzaHandler() }
///         WorkerMain.run(provider)
///     }
/// }
/// ```
///
/// Under `concierge pool --executable`, the pool's broker endpoints, worker names and CURVE keys reach it through the
/// environment (``WorkerProcessOptions/Environment``). A malformed option (an endpoint without `tcp://`, a capacity
/// out of range) is a usage error at start: the message and the usage on standard error, exit 64.
public enum WorkerMain {
    /// Parses the process's arguments and runs one worker serving `provider` until SIGTERM or SIGINT, then exits
    /// (0 after a graceful stop; 64 for a usage error; 1 for an error at start, such as a bad key file).
    ///
    /// The main thread parks in `pause()` while the worker runs on Swift's concurrency threads (nothing in a worker
    /// runs on the main actor): unlike `dispatchMain()`, that keeps no unwind tables of the main stack resident
    /// (Docs/PROFILES.md, "The idle worker").
    public static func run(_ provider: HandlerProvider, arguments: [String]? = nil) -> Never {
        let options: WorkerProcessOptions
        do {
            options = try WorkerProcessOptions.parse(arguments)
        } catch {
            WorkerProcessOptions.exit(withError: error)
        }
        // Detached: a task created here would inherit the main actor, whose queue nobody drains.
        Task.detached {
            do {
                try await options.run(provider: provider)
                exit(0)
            } catch {
                WorkerProcessOptions.exit(withError: refusalExit(error))
            }
        }
        while true { pause() }
    }

    /// The exit status of a worker its broker refused for good (`EX_CONFIG`): its definition differs from the one
    /// served under the same version (`definition-refused`), or its identity may not serve its types
    /// (`registration-forbidden`). `concierge pool` does not restart a worker that exits with it (PROTOCOL.md 5.16).
    public static let refusedExitStatus: Int32 = 78

    /// `error` as the worker process ends on it: a refusal for good is written to standard error once and becomes
    /// ``refusedExitStatus``; any other error is left as it is (exit status 1).
    public static func refusalExit(_ error: any Error) -> any Error {
        guard let refusal = error as? WorkerError,
            refusal.code == .definitionRefused || refusal.code == .registrationForbidden
        else { return error }
        let line = Array("concierge worker: \(refusal); not registering again (exit \(refusedExitStatus))\n".utf8)
        _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
        return ExitCode(refusedExitStatus)
    }
}
