#if canImport(Glibc)
    public import Glibc
#elseif canImport(Darwin)
    public import Darwin
#endif

/// Nanoseconds on the monotonic clock: cheap to read, never goes back; used for deadlines and heartbeats.
public enum MonotonicTime {
    @inlinable
    public static func now() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return UInt64(spec.tv_sec) &* 1_000_000_000 &+ UInt64(spec.tv_nsec)
    }
}

extension Duration {
    /// The duration in whole nanoseconds (negative durations become 0).
    public var nanoseconds: UInt64 {
        let (seconds, attoseconds) = components
        guard seconds >= 0 else { return 0 }
        return UInt64(seconds) &* 1_000_000_000 &+ UInt64(attoseconds / 1_000_000_000)
    }

    /// The duration in whole milliseconds.
    public var milliseconds: Int { Int(nanoseconds / 1_000_000) }
}
