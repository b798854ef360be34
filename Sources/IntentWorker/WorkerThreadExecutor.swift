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
    private let queue = Mutex<[UnownedJob]>([])
    private let wake: EventFD
    private let owner = Atomic<UInt>(0)

    init(wake: EventFD) {
        self.wake = wake
    }

    /// Called by the loop thread once, before it runs jobs.
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

    /// Runs the jobs waiting now (and the ones they enqueue), up to `limit`. Returns how many ran.
    @discardableResult
    func runPendingJobs(limit: Int = 10_000) -> Int {
        var ran = 0
        while ran < limit {
            let batch = queue.withLock { queue -> [UnownedJob] in
                let batch = queue
                queue.removeAll(keepingCapacity: true)
                return batch
            }
            if batch.isEmpty { break }
            for job in batch { job.runSynchronously(on: asUnownedTaskExecutor()) }
            ran += batch.count
        }
        return ran
    }
}
