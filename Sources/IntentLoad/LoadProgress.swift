/// A snapshot of a running load test, given to the progress callback once per interval.
public struct LoadProgress: Sendable {
    /// Seconds since the run started (warm-up included).
    public var elapsedSeconds: Double
    /// Whether the warm-up is still running (nothing is counted yet).
    public var warmingUp: Bool
    /// Replies that ended a request (final or error) per second over the last interval.
    public var rate: Double
    /// p99 of the time to the final reply so far (µs; 0 before the first measured reply).
    public var p99Microseconds: UInt64
    /// Error replies so far.
    public var errors: Int
    /// Deadline misses so far.
    public var deadlineMisses: Int
    /// Requests in flight now.
    public var inFlight: Int
    /// Measured requests sent so far.
    public var sent: Int
    /// Progress replies so far (each says the broker holds the request: queued or running).
    public var progressReplies: Int = 0

    /// One line for a terminal: `[  3.0s] 45,123 req/s  p99 1.20 ms  errors 0  misses 0  in flight 100`.
    public var line: String {
        let seconds = Double(Int(elapsedSeconds * 10)) / 10
        var text = "[\(String(seconds).leftPadded(6))s] "
        text += warmingUp ? "warm-up " : ""
        text += "\(LoadFormat.grouped(Int(rate.rounded()))) req/s  p99 \(LoadFormat.microseconds(p99Microseconds))"
        text += "  errors \(errors)  deadline misses \(deadlineMisses)  in flight \(inFlight)"
        return text
    }
}
