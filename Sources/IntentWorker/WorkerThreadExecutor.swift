import Synchronization
import ZeroMQ

#if canImport(Glibc)
    import Glibc
#endif

/// A `TaskExecutor` that runs a worker's jobs on the worker's own socket thread, between polls.
///
/// A job then costs no thread hop at all: the JOB is read, the handler runs, and the RESULT is written on one
/// thread, as in a C worker. Jobs that suspend (a handler awaiting I/O or a sleep) are resumed through this
/// executor too; a resumption from another thread wakes the loop through its ``EventFD``.
final class WorkerThreadExecutor: TaskExecutor, @unchecked Sendable {
    /// The jobs waiting to run, oldest first.
    private let queue = Mutex(FIFOQueue<UnownedJob>())
    private let wake: EventFD
    private let owner = Atomic<UInt>(0)

    init(wake: EventFD) {
        self.wake = wake
    }

    /// Called by the thread that owns the loop: once at the start, and again by each thread taking it over.
    func adoptCurrentThread() {
        owner.store(UInt(pthread_self()), ordering: .releasing)
    }

    /// Whether the caller runs on the loop's thread.
    var isOwnerThread: Bool {
        owner.load(ordering: .acquiring) == UInt(pthread_self())
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.withLock { $0.append(job) }
        if !isOwnerThread { wake.signal() }
    }

    /// Whether jobs are waiting to run.
    var hasPendingJobs: Bool { queue.withLock { !$0.isEmpty } }

    /// Runs the jobs waiting now (and the ones they enqueue), up to `limit`, one at a time, each inside
    /// ``LoopRelay/enterHandler()`` and ``LoopRelay/leaveHandler(_:)``. Returns false when the loop was taken over
    /// while a job ran: the caller must leave the loop. Jobs are taken one at a time so that those behind a long one
    /// stay in the queue for the thread that takes the loop over.
    func runPendingJobs(relay: LoopRelay, limit: Int = 10_000) -> Bool {
        var ran = 0
        while ran < limit, let job = queue.withLock({ $0.popFirst() }) {
            let token = relay.enterHandler()
            job.runSynchronously(on: asUnownedTaskExecutor())
            ran += 1
            if !relay.leaveHandler(token) { return false }
        }
        return true
    }
}
