public import ArgumentParser
import IntentWorker

/// The heartbeat interval of a worker or client (`worker`, `pool`, `send`, and `concierge-worker`).
public struct HeartbeatOption: ParsableArguments, Sendable {
    @Option(help: "Heartbeat interval in milliseconds (must match the broker's).")
    public var heartbeatMs: Int = WorkerConfiguration(name: "").heartbeatInterval.wholeMilliseconds

    public init() {}

    public func validate() throws {
        guard heartbeatMs > 0 else { throw ValidationError("--heartbeat-ms takes a positive number") }
    }
}

extension Duration {
    /// The duration in whole milliseconds.
    var wholeMilliseconds: Int {
        Int(components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000)
    }
}
