import Synchronization
import Testing
import ZeroMQ

@testable import IntentWorker

/// The worker's reusable job tasks (``JobRunnerPool``): a runner takes one job after another, jobs running at once
/// have a runner each, and a cancellation reaches exactly the job it was meant for.
///
/// The tests drive the executor on their own thread, as the worker's loop does between polls.
@Suite struct JobRunnerPoolTests {
    final class Record: Sendable {
        let ran = Atomic<Int>(0)
        let sawCancellation = Atomic<Int>(0)

        var runs: Int { ran.load(ordering: .relaxed) }
        var cancellations: Int { sawCancellation.load(ordering: .relaxed) }
    }

    /// Holds jobs suspended until it opens.
    final class Gate: Sendable {
        private let waiting = Mutex<[UnsafeContinuation<Void, Never>]>([])

        var count: Int { waiting.withLock { $0.count } }

        func wait() async {
            await withUnsafeContinuation { continuation in waiting.withLock { $0.append(continuation) } }
        }

        func openAll() {
            let all = waiting.withLock { waiting in
                defer { waiting.removeAll() }
                return waiting
            }
            for continuation in all { continuation.resume() }
        }
    }

    struct Harness {
        let executor = WorkerThreadExecutor(wake: EventFD())
        let relay = LoopRelay()
        let pool: JobRunnerPool

        init() { pool = JobRunnerPool(executor: executor) }

        /// Runs what waits on the executor, on this thread, until nothing does.
        func drain() {
            executor.adoptCurrentThread()
            while executor.hasPendingJobs { _ = executor.runPendingJobs(relay: relay) }
        }
    }

    @Test func jobsOneAfterAnotherShareOneRunner() {
        let harness = Harness()
        let record = Record()
        for _ in 0..<100 {
            _ = harness.pool.run { record.ran.add(1, ordering: .relaxed) }
            harness.drain()
        }
        #expect(record.runs == 100)
        #expect(harness.pool.runnersMade == 1)
        #expect(harness.pool.idleRunners == 1)
        harness.pool.finish()
        harness.drain()
        #expect(harness.pool.idleRunners == 0)
    }

    @Test func jobsRunningAtOnceHaveARunnerEachAndTheRunnersAreReused() {
        let harness = Harness()
        let record = Record()
        let gate = Gate()
        for round in 1...2 {
            for _ in 0..<3 {
                _ = harness.pool.run {
                    await gate.wait()
                    record.ran.add(1, ordering: .relaxed)
                }
            }
            harness.drain()
            #expect(gate.count == 3)
            #expect(harness.pool.runnersMade == 3)
            #expect(harness.pool.idleRunners == 0)
            gate.openAll()
            harness.drain()
            #expect(record.runs == 3 * round)
            #expect(harness.pool.idleRunners == 3)
        }
        harness.pool.finish()
        harness.drain()
    }

    @Test func aCancelledJobSeesItsCancellationAndItsRunnerRetires() {
        let harness = Harness()
        let record = Record()
        let gate = Gate()
        let task = harness.pool.run {
            await gate.wait()
            if Task.isCancelled { record.sawCancellation.add(1, ordering: .relaxed) }
        }
        harness.drain()
        task.cancel()
        gate.openAll()
        harness.drain()
        #expect(record.cancellations == 1)
        #expect(harness.pool.idleRunners == 0)  // retired: its task stays cancelled
        _ = harness.pool.run {
            if Task.isCancelled { record.sawCancellation.add(1, ordering: .relaxed) }
            record.ran.add(1, ordering: .relaxed)
        }
        harness.drain()
        #expect(record.runs == 1)
        #expect(record.cancellations == 1)  // the next job is not cancelled
        #expect(harness.pool.runnersMade == 2)
        harness.pool.finish()
        harness.drain()
    }

    /// A lost connection cancels the tasks of every job in its table, including answered jobs whose RESULT was not
    /// sent yet, whose runners are idle by then: such a runner must not take the next job.
    @Test func anIdleRunnerCancelledAfterItsJobIsNotGivenTheNextJob() async {
        let harness = Harness()
        let record = Record()
        let first = harness.pool.run { record.ran.add(1, ordering: .relaxed) }
        harness.drain()
        #expect(harness.pool.idleRunners == 1)
        first.cancel()
        _ = harness.pool.run {
            if Task.isCancelled { record.sawCancellation.add(1, ordering: .relaxed) }
            record.ran.add(1, ordering: .relaxed)
        }
        harness.drain()
        #expect(record.runs == 2)
        #expect(record.cancellations == 0)
        #expect(harness.pool.runnersMade == 2)
        #expect(harness.pool.idleRunners == 1)  // the new runner; the cancelled one has retired
        harness.pool.finish()
        harness.drain()
        await first.value
    }

    @Test func afterFinishNoRunnerWaitsForAJob() async {
        let harness = Harness()
        let gate = Gate()
        let idle = harness.pool.run {}
        let busy = harness.pool.run { await gate.wait() }
        harness.drain()
        #expect(harness.pool.idleRunners == 1)
        harness.pool.finish()
        gate.openAll()  // a job that ends after the finish does not wait for another
        harness.drain()
        #expect(harness.pool.idleRunners == 0)
        await idle.value
        await busy.value
    }
}
