import Synchronization

/// Long-lived tasks that run a worker's jobs one after another on the worker's ``WorkerThreadExecutor``, so that a
/// job does not cost a task of its own.
///
/// A new task per job costs, besides the job itself, the task's allocation, its first allocator slab (about 1 KiB,
/// past glibc's per-thread cache), an executor-preference record, and at its end the task's completion and
/// destruction (which looks its result type's metadata up again): about 5,000 of the 64,000 instructions an echo job
/// took in all (valgrind's callgrind, `Docs/PROFILES.md`). A runner instead waits for its next job on a
/// continuation, which the loop resumes.
///
/// Cancellation (`Schemas/PROTOCOL.md` section 5.13) stays per job: ``run(_:)`` returns the task running the job,
/// and cancelling it cancels that job. A task's cancellation cannot be undone, so a runner whose task was cancelled
/// retires after its job, and a runner found cancelled while idle (its last job's entry was cancelled with a lost
/// connection) is retired instead of given a job; a new runner takes its place when one is needed.
///
/// Thread safety: ``run(_:)`` is called by the thread owning the worker's loop; runners go idle from whichever
/// thread ran their job (after a loop hand-over, not the owner), so the idle list is locked.
final class JobRunnerPool: Sendable {
    typealias Work = @Sendable () async -> Void

    /// One runner: its task, set once by the thread that made it, before any job of it can be cancelled.
    private final class Runner: Sendable {
        let task = Mutex<Task<Void, Never>?>(nil)
    }

    private struct Idle {
        let runner: Runner
        let next: UnsafeContinuation<Work?, Never>
    }

    private struct State {
        var idle: [Idle] = []
        var finished = false
        /// Runners made so far (for tests and the worker's statistics).
        var made = 0
    }

    private let executor: WorkerThreadExecutor
    private let state = Mutex(State())

    init(executor: WorkerThreadExecutor) {
        self.executor = executor
    }

    /// How many runner tasks were made so far.
    var runnersMade: Int { state.withLock { $0.made } }

    /// How many runners wait for a job now.
    var idleRunners: Int { state.withLock { $0.idle.count } }

    /// Runs `work` on an idle runner, or on a new one, and returns the task that runs it: cancelling that task
    /// cancels this job (and retires the runner after it).
    func run(_ work: @escaping Work) -> Task<Void, Never> {
        while let idle = state.withLock({ $0.idle.popLast() }) {
            guard let task = idle.runner.task.withLock({ $0 }), !task.isCancelled else {
                idle.next.resume(returning: nil)  // retired: its task was cancelled while it had no job
                continue
            }
            idle.next.resume(returning: work)
            return task
        }
        let runner = Runner()
        state.withLock { $0.made += 1 }
        let task = Task(executorPreference: executor) { [self] in
            var work = work
            while true {
                await work()
                if Task.isCancelled { return }
                guard let next = await nextJob(for: runner) else { return }
                work = next
            }
        }
        runner.task.withLock { $0 = task }
        return task
    }

    /// Waits for the runner's next job; nil once the pool has finished or the runner is retired.
    private func nextJob(for runner: Runner) async -> Work? {
        await withUnsafeContinuation { (next: UnsafeContinuation<Work?, Never>) in
            let accepted = state.withLock { state -> Bool in
                guard !state.finished else { return false }
                state.idle.append(Idle(runner: runner, next: next))
                return true
            }
            if !accepted { next.resume(returning: nil) }
        }
    }

    /// Ends every idle runner and every runner that goes idle from now on (when the worker's loop ends).
    func finish() {
        let idle = state.withLock { state -> [Idle] in
            state.finished = true
            defer { state.idle.removeAll() }
            return state.idle
        }
        for runner in idle { runner.next.resume(returning: nil) }
    }
}
