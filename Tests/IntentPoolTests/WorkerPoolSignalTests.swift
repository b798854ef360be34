import Logging
import Testing
import ZeroMQ

@testable import IntentPool

#if canImport(Glibc)
    import Glibc
#endif

/// The pool signals only its own workers: a worker's pid leaves the pool's table before the process is reaped
/// (so the pid cannot have been reused by another process while it is listed), and signals are sent under the
/// lock the pids are read under. Real child processes (`sleep`); every wait is bounded.
@Suite(.serialized) struct WorkerPoolSignalTests {
    static let quiet = Logger(label: "test.pool") { _ in SwiftLogNoOpLogHandler() }

    @Test func aWorkersPidLeavesTheTableBeforeTheProcessIsReaped() async throws {
        let pool = WorkerPool(
            configuration: PoolConfiguration(
                executable: "/usr/bin/sleep", arguments: ["1"], size: 1, restartInitialDelay: .seconds(30)),
            logger: Self.quiet
        )
        let run = Task { try await pool.run() }
        defer { run.cancel() }
        let pid = try #require(await poll(within: .seconds(10)) { pool.processIdentifiers[0] }, "no worker started")
        // Hold the pool's lock from before the worker exits until well after: the table cannot change meanwhile, so
        // a pid it lists must stay unreaped all that time (a reaped pid may be reused, and would be signalled).
        let problem = await SocketThread.run(name: "test-pool-lock") {
            pool.withWorkerTable { table -> String? in
                guard table[0] == pid else { return "the worker left the table before the test held the lock" }
                let clock = ContinuousClock()
                let exitBy = clock.now + .seconds(10)
                while !hasExited(pid) {
                    guard clock.now < exitBy else { return "the worker did not exit" }
                    usleep(2_000)
                }
                let holdUntil = clock.now + .milliseconds(300)
                while clock.now < holdUntil {
                    if isReaped(pid) { return "pid \(pid) was reaped while the pool still listed it" }
                    usleep(2_000)
                }
                return nil
            }
        }
        #expect(problem == nil, "\(problem ?? "")")
        run.cancel()
        #expect(await poll(within: .seconds(20)) { pool.processIdentifiers.isEmpty ? true : nil } == true)
    }

    @Test func removedWorkersGetSIGTERMAndLeaveTheTable() async throws {
        let pool = WorkerPool(
            configuration: PoolConfiguration(executable: "/usr/bin/sleep", arguments: ["30"], size: 2),
            logger: Self.quiet
        )
        let run = Task { try await pool.run() }
        defer { run.cancel() }
        let started = try #require(
            await poll(within: .seconds(10)) { pool.processIdentifiers.count == 2 ? pool.processIdentifiers : nil })
        pool.resize(to: 1)
        #expect(pool.size == 1)
        // The removed worker (the highest slot) ends by SIGTERM long before its 30 s sleep would.
        let left = await poll(within: .seconds(10)) { () -> Bool? in
            pool.withWorkerTable { $0[1] == nil ? true : nil }
        }
        #expect(left == true)
        #expect(pool.processIdentifiers == [0: started[0]!])
        run.cancel()
        #expect(await poll(within: .seconds(20)) { pool.processIdentifiers.isEmpty ? true : nil } == true)
    }
}

/// Whether child `pid` has exited (it may not be reaped yet); not reaping it.
func hasExited(_ pid: Int32) -> Bool {
    var info = siginfo_t()
    let rc = waitid(P_PID, id_t(pid), &info, WEXITED | WNOHANG | WNOWAIT)
    return rc == -1 || info.si_signo == SIGCHLD  // -1: gone already (ECHILD)
}

/// Whether child `pid` has been reaped (its pid is free for reuse).
func isReaped(_ pid: Int32) -> Bool {
    var info = siginfo_t()
    return waitid(P_PID, id_t(pid), &info, WEXITED | WNOHANG | WNOWAIT) == -1 && errno == ECHILD
}

/// The first non-nil value of `probe`, tried every 10 ms for at most `limit`.
func poll<T>(within limit: Duration, _ probe: () -> T?) async -> T? {
    let clock = ContinuousClock()
    let end = clock.now + limit
    while clock.now < end {
        if let value = probe() { return value }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return probe()
}
