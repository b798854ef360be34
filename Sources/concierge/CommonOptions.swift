import ArgumentParser
import Foundation
import IntentWorker
import Logging

/// Options every long-running subcommand shares.
struct LoggingOptions: ParsableArguments {
    @Option(help: "Log level: trace, debug, info, notice, warning, error, critical.")
    var logLevel: String = "info"

    /// Bootstraps swift-log once, first thing in a subcommand's `run()`.
    func bootstrap() -> Logger.Level {
        let level = Logger.Level(rawValue: logLevel) ?? .info
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        return level
    }
}

/// The path of this executable.
var currentExecutablePath: String {
    (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
}

/// What a pool runs by default: the slim `concierge-worker` next to this executable when it is there (a small
/// process), else `concierge worker`.
var defaultWorkerCommand: (executable: String, arguments: [String]) {
    let sibling = URL(fileURLWithPath: currentExecutablePath).deletingLastPathComponent()
        .appendingPathComponent("concierge-worker").path
    if FileManager.default.isExecutableFile(atPath: sibling) { return (sibling, []) }
    return (currentExecutablePath, ["worker"])
}

struct WorkerOptions: ParsableArguments {
    @Option(help: "Jobs each worker runs at once.")
    var capacity: Int = Defaults.worker.capacity

    @Option(
        help: """
            Where handlers run: `thread` (the worker's socket thread: fastest) or `pool` (Swift's shared pool: for \
            handlers that compute for seconds without suspending).
            """
    )
    var jobsOn: String = Defaults.worker.jobExecution.rawValue

    /// Arguments that pass these options on to `concierge worker` (pools).
    var workerArguments: [String] { ["--capacity", String(capacity), "--jobs-on", jobsOn] }
}

struct HeartbeatOption: ParsableArguments {
    @Option(help: "Heartbeat interval in milliseconds (must match the broker's).")
    var heartbeatMs: Int = Defaults.worker.heartbeatInterval.wholeMilliseconds
}
