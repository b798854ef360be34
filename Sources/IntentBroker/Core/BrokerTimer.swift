/// A request's timer: its deadline (less the reply margin) or its hard limit (section 6.3 of the protocol), or the end
/// of the grace period a cancelled job's worker has to answer (section 4.10.2), or the deadline of a duplicate attached
/// to it (4.10.1).
///
/// Timers are never cancelled: one whose request has ended (or moved on) is skipped when it falls due. Timers due at
/// the same time fire in the order they were set.
struct BrokerTimer: Comparable {
    enum Kind { case deadline, hardLimit, cancelGrace, listenerDeadline }

    let time: UInt64
    /// Order of setting, to break ties.
    let sequence: UInt64
    let kind: Kind
    let request: RequestID

    static func < (lhs: Self, rhs: Self) -> Bool {
        (lhs.time, lhs.sequence) < (rhs.time, rhs.sequence)
    }

    static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.time == rhs.time && lhs.sequence == rhs.sequence
    }
}
