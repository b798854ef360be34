/// The open-loop arrival schedule: request `i` is due at `start + i / rate`, whatever happened before.
///
/// Latency is measured from these intended times (as wrk2 does), so when the system under test stalls, the
/// requests that should have been sent meanwhile count the stall too (no coordinated omission).
public struct LoadSchedule: Sendable, Equatable {
    /// Monotonic nanoseconds of request 0.
    public let start: UInt64
    /// Requests per second.
    public let rate: Double
    private let intervalNanos: Double

    public init(start: UInt64, rate: Double) {
        precondition(rate > 0 && rate.isFinite, "rate must be positive")
        self.start = start
        self.rate = rate
        intervalNanos = 1e9 / rate
    }

    /// When request `index` is due (computed from the start, so rounding never accumulates).
    public func intendedTime(of index: Int) -> UInt64 {
        start &+ UInt64(Double(index) * intervalNanos)
    }

    /// How many requests are due at `now` (requests 0 ..< result).
    public func dueCount(at now: UInt64) -> Int {
        guard now >= start else { return 0 }
        // Estimate, then settle on the intended times themselves (they are rounded down to whole nanoseconds).
        var count = Int(Double(now - start) / intervalNanos) + 1
        while intendedTime(of: count) <= now { count += 1 }
        while count > 0 && intendedTime(of: count - 1) > now { count -= 1 }
        return count
    }
}
