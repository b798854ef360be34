import Synchronization

/// Who runs the worker's socket loop, and the hand-over that keeps it running while handler code holds a thread.
///
/// Handlers run on the loop's own thread, between polls (no thread hop per job: the fast path). A handler that
/// computes for long without suspending would then stop the heartbeats and every other job, so a standby thread
/// watches the loop: when the same handler has been running for a whole ``WorkerLoop`` check interval, the standby
/// takes the loop over (socket, timers and all: a ZeroMQ socket may change threads with a full memory barrier, which
/// the compare-and-exchange below gives), and the thread left in the handler finishes that one job, posts its
/// result, and leaves. A new standby is started at each hand-over, so the loop is never without one.
///
/// The state is one counter: even while the owner runs the loop, odd while it runs a handler. Each handler bumps
/// it twice, so the standby sees "the same handler still running" as the same odd value on two looks in a row, and
/// takes over by bumping it past that value. Exactly one of the owner's ``leaveHandler(_:)`` and the standby's
/// ``takeOver(ifStillAt:)`` succeeds. Costs of the fast path: one atomic add and one compare-and-exchange per job.
final class LoopRelay: Sendable {
    /// The loop has ended: no thread may take it over, and handlers leaving learn that they do not own it.
    private static let finishedMark: UInt64 = 1 << 63
    private let state = Atomic<UInt64>(0)

    /// The owner is about to run handler code. Returns the token to pass to ``leaveHandler(_:)``.
    func enterHandler() -> UInt64 {
        state.wrappingAdd(1, ordering: .releasing).newValue
    }

    /// The owner's handler code returned. Returns false when the loop was taken over (or has finished) meanwhile:
    /// the caller no longer owns anything of the loop and must not touch it.
    func leaveHandler(_ token: UInt64) -> Bool {
        state.compareExchange(expected: token, desired: token &+ 1, ordering: .acquiringAndReleasing).exchanged
    }

    /// What the standby looks at: odd while the owner runs a handler, ``isFinished(_:)`` once the loop has ended.
    func observe() -> UInt64 { state.load(ordering: .acquiring) }

    /// Whether an observed value says the loop has ended.
    static func isFinished(_ value: UInt64) -> Bool { value & finishedMark != 0 }

    /// Whether an observed value says a handler is running.
    static func isInHandler(_ value: UInt64) -> Bool { value & 1 == 1 && !isFinished(value) }

    /// Takes the loop over if the owner is still in the handler it was in at `observed`. On success the caller owns
    /// the loop (and sees everything the old owner wrote to it).
    func takeOver(ifStillAt observed: UInt64) -> Bool {
        guard Self.isInHandler(observed) else { return false }
        return state.compareExchange(expected: observed, desired: observed &+ 1, ordering: .acquiringAndReleasing)
            .exchanged
    }

    /// Marks the loop as ended (by its owner, after the last use of the socket).
    func finish() {
        state.store(Self.finishedMark, ordering: .releasing)
    }
}
