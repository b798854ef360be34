import CoreMetrics
import IntentJournal
import IntentWire
import Synchronization
import ZeroMQ

#if canImport(Glibc)
    import Glibc
#endif

/// Runs a journal's commits on a thread of its own, one at a time, so that the broker's loop reads and decides the
/// next batch while the last one is being written (pipelined group commit): the actions of a batch wait for its
/// commit, the batches that arrive meanwhile are committed together next, and under load a commit (and its fsync)
/// covers many more requests than one loop batch.
///
/// The loop calls ``submit(_:)`` with no commit in flight, polls ``done``'s file descriptor, and takes the outcome
/// with ``takeOutcome()`` when it is readable.
final class JournalWriter: Sendable {
    private struct State {
        var operations: [JournalOperation]?
        var outcome: Result<Void, JournalError>?
        var stopping = false
    }

    private let journal: any Journal
    private let state = Mutex(State())
    private let request = EventFD()
    /// Readable when a submitted commit has finished (the loop's, polled by it).
    let done: EventFD

    /// `commitDuration`, if given, records how long each commit took (metrics).
    init(journal: any Journal, done: EventFD, commitDuration: CoreMetrics.Timer? = nil) {
        self.journal = journal
        self.done = done
        let request = self.request
        // The thread keeps the writer alive until stop().
        SocketThread.start(name: "concierge-journal") { [self] in
            var descriptor = pollfd(fd: request.fileDescriptor, events: Int16(POLLIN), revents: 0)
            while true {
                _ = poll(&descriptor, 1, -1)
                request.drain()
                let (operations, stopping) = state.withLock { state in
                    let operations = state.operations
                    state.operations = nil
                    return (operations, state.stopping)
                }
                if let operations {
                    let outcome: Result<Void, JournalError>
                    let start = MonotonicTime.now()
                    do throws(JournalError) {
                        try journal.commit(operations)
                        outcome = .success(())
                        commitDuration?.recordNanoseconds(Int64(clamping: MonotonicTime.now() - start))
                    } catch {
                        outcome = .failure(error)
                    }
                    state.withLock { $0.outcome = outcome }
                    done.signal()
                }
                if stopping { return }
            }
        }
    }

    /// Starts committing `operations` (the loop has no other commit in flight).
    func submit(_ operations: sending [JournalOperation]) {
        state.withLock { $0.operations = operations }
        request.signal()
    }

    /// The outcome of the commit that finished, if one did. With `drain` (the loop's poll found ``done`` readable)
    /// ``done`` is reset in any case; without it (a check between messages) only when an outcome is taken, so that
    /// the check costs no system call while the commit runs.
    func takeOutcome(drain: Bool = true) -> Result<Void, JournalError>? {
        if drain { done.drain() }
        let outcome = state.withLock { state in
            let outcome = state.outcome
            state.outcome = nil
            return outcome
        }
        if !drain, outcome != nil { done.drain() }
        return outcome
    }

    /// Waits for the commit in flight to finish and returns its outcome.
    func wait() -> Result<Void, JournalError> {
        var descriptor = pollfd(fd: done.fileDescriptor, events: Int16(POLLIN), revents: 0)
        while true {
            if let outcome = takeOutcome() { return outcome }
            _ = poll(&descriptor, 1, 1000)
        }
    }

    /// Ends the thread once the commit in flight (if any) has finished.
    func stop() {
        state.withLock { $0.stopping = true }
        request.signal()
    }
}
