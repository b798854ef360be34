/// A message from a worker that passed the broker's checks (`Schemas/PROTOCOL.md` section 5.12).
public enum WorkerCommand: Sendable, Hashable {
    /// The commands a worker sends.
    public enum Name: Sendable, Hashable {
        case ready
        case result
        case heartbeat
        case drain
        case disconnect
        /// Version 02: a query for the broker's load, from any peer (section 5.14). Only in errors: a valid STATS is
        /// recognised by ``WorkerMessageDecoder/isStatsQuery(_:)`` before decoding, and is never a `WorkerCommand`.
        case stats
    }

    /// READY: register, or register again.
    case ready(WorkerReady)
    /// RESULT of a job.
    case result(WorkerResult)
    /// HEARTBEAT.
    case heartbeat
    /// DRAIN: send no new jobs.
    case drain
    /// DISCONNECT: the worker leaves.
    case disconnect
    /// Check 4 failed: a message other than READY from a routing id that is not registered, with the command it
    /// names (nil when F1 is not a worker command). The broker answers DISCONNECT, unless the message is DISCONNECT
    /// itself, and drops it.
    case unregistered(Name?)
}
