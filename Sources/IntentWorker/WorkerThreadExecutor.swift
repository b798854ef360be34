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

    /// Runs the jobs waiting now (and the ones they enqueue), up to `limit`, each inside ``LoopRelay/enterHandler()``
    /// and ``LoopRelay/leaveHandler(_:)``. Returns false when the loop was taken over while a job ran: the jobs of
    /// the batch not yet run go back to the front of the queue for the new owner, and the caller must leave the loop.
    func runPendingJobs(relay: LoopRelay, limit: Int = 10_000) -> Bool {
        var ran = 0
        while ran < limit {
            let batch = queue.withLock { queue -> [UnownedJob] in
                let batch = queue
                queue.removeAll(keepingCapacity: true)
                return batch
            }
            if batch.isEmpty { break }
            for index in batch.indices {
                let token = relay.enterHandler()
                batch[index].runSynchronously(on: asUnownedTaskExecutor())
                if !relay.leaveHandler(token) {
                    let rest = batch[(index + 1)...]
                    if !rest.isEmpty {
                        queue.withLock { $0.insert(contentsOf: rest, at: 0) }
                        wake.signal()
                    }
                    return false
                }
            }
            ran += batch.count
        }
        return true
    }
}
