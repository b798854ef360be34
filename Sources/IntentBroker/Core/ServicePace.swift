/// How fast an intent type's queue moves: jobs answered per second while the type is saturated (section 6.3,
/// rule 2 of the protocol).
///
/// A type answering as fast as it is asked says nothing about how fast its queue would move, so only answers given
/// while the type is saturated count, over the time it has been saturated: a span starts when a request has to wait
/// or a job fills the type's last worker with room, not at the start of the window in which that happened (a burst
/// arriving late in a window would otherwise be charged the whole window and read as a slow type). A span shorter
/// than ``minimumSpan`` is carried into the next window rather than measured.
///
/// Answers and saturated time are kept as sums that decay by ``decay`` per measured span (about a second of memory
/// at one span per 100 ms window), so the estimate knows how many answers it rests on. Shedding a request that would
/// have started in time is worse than admitting one that is then shed at its deadline, so ``wouldMiss`` judges with
/// the fastest pace the answers seen make likely (about two standard deviations above the count), not the mean: a
/// few answers over a short span, as on a busy machine, shed nothing; and before the first answer there is no pace.
struct ServicePace {
    /// The shortest span measured, in nanoseconds: shorter ones say more about scheduling than about the type.
    static var minimumSpan: UInt64 { 50_000_000 }
    /// How much of the sums is kept at each measured span.
    static var decay: Double { 0.9 }

    /// When the current saturated span began (nil while the type is not saturated).
    private(set) var saturatedSince: UInt64?
    /// Jobs answered since `saturatedSince`.
    private(set) var answered = 0
    /// Decayed sum of the answers counted in measured spans.
    private(set) var recentAnswers: Double = 0
    /// Decayed sum of the measured spans' lengths, in seconds.
    private(set) var recentSeconds: Double = 0

    /// The mean pace, jobs per second (0 until first measured).
    var jobsPerSecond: Double { recentSeconds > 0 ? recentAnswers / recentSeconds : 0 }

    /// The fastest pace the answers seen make likely: the count raised by about two standard deviations. Infinite
    /// until an answer was seen while saturated: a type no worker has answered yet (workers still registering, a
    /// standby that just took over) has no pace, and its requests queue (checks 15 of section 4.8, section 6.6).
    var likelyFastestJobsPerSecond: Double {
        guard recentSeconds > 0, recentAnswers > 0 else { return .infinity }
        let count = recentAnswers + 1
        return (count + 2 * count.squareRoot()) / recentSeconds
    }

    /// The type is saturated as of `now`: a request had to wait, or a job filled its last worker with room.
    mutating func markSaturated(now: UInt64) {
        guard saturatedSince == nil else { return }
        saturatedSince = now
        answered = 0
    }

    /// A job of the type was answered.
    mutating func recordAnswer() {
        if saturatedSince != nil { answered += 1 }
    }

    /// Closes the span at `now` if it is long enough; `stillSaturated` (requests waiting, or no worker with room)
    /// starts the next span at once.
    mutating func update(now: UInt64, stillSaturated: Bool) {
        guard let since = saturatedSince else { return }
        let span = now &- since
        if span >= Self.minimumSpan {
            recentAnswers = recentAnswers * Self.decay + Double(answered)
            recentSeconds = recentSeconds * Self.decay + Double(span) / 1e9
            saturatedSince = stillSaturated ? now : nil
            answered = 0
        } else if !stillSaturated {
            saturatedSince = nil
            answered = 0
        }
    }

    /// Whether a request with `ahead` requests before it (itself included) would start only after `fraction` of
    /// `deadline` nanoseconds even at the fastest likely pace. Never true before the pace is measured.
    func wouldMiss(ahead: Int, deadline: UInt64, fraction: Double = 0.8) -> Bool {
        Double(ahead) / likelyFastestJobsPerSecond * 1e9 > Double(deadline) * fraction
    }
}
