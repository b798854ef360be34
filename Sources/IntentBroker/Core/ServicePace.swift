/// How fast an intent type's queue moves: jobs answered per second, smoothed over windows of about 100 ms and
/// measured only while the type is saturated (section 6.3, rule 2 of the protocol).
///
/// A type answering as fast as it is asked says nothing about how fast its queue would move, so a window in which
/// the type was not saturated leaves the pace as it was; a saturated window with no answers slows it to nothing.
struct ServicePace {
    /// Jobs answered since the last update.
    var answered = 0
    /// Whether a request had to wait, or a job filled the type's last worker with room, since the last update.
    var saturated = false
    /// Smoothed jobs per second (0 until first measured).
    private(set) var jobsPerSecond: Double = 0

    /// Closes a window of `seconds`; `hasQueue` counts as saturation (requests are waiting right now).
    mutating func update(elapsedSeconds seconds: Double, hasQueue: Bool) {
        if seconds > 0, saturated || hasQueue {
            let sample = Double(answered) / seconds
            jobsPerSecond = jobsPerSecond == 0 ? sample : 0.7 * jobsPerSecond + 0.3 * sample
        }
        answered = 0
        saturated = false
    }

    /// Whether a request with `ahead` requests before it (itself included) would start only after `fraction` of
    /// `deadline` nanoseconds at the measured pace. Never true before the pace is measured.
    func wouldMiss(ahead: Int, deadline: UInt64, fraction: Double = 0.8) -> Bool {
        jobsPerSecond > 0 && Double(ahead) / jobsPerSecond * 1e9 > Double(deadline) * fraction
    }
}
