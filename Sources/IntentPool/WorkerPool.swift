import Foundation
import IntentWire
public import Logging
public import ServiceLifecycle
import Subprocess
import Synchronization
import SystemPackage
import ZeroMQ

#if canImport(Glibc)
    import Glibc
#endif

/// Supervises N worker processes as a ServiceLifecycle `Service`: starts them, restarts any that dies (with
/// exponential backoff, so a crash loop cannot spin), and can be resized while it runs with ``resize(to:)``:
/// added workers start at once, removed ones get SIGTERM and drain before they exit.
///
/// On graceful shutdown every worker gets SIGTERM (and SIGKILL after ``PoolConfiguration/stopTimeout``).
///
/// Signals never reach a process that is not the pool's worker: a worker's pid is in the pool's table from its
/// start until it has exited, and leaves the table before the process is reaped (until then the pid cannot be
/// reused); every signal is sent under the lock the pid was read under.
public final class WorkerPool: Service, Sendable {
    struct Slot {
        var wanted = true
        /// The worker's pid, from its start until it has exited; cleared (under the lock) before Subprocess reaps
        /// the process, so a pid read under the lock names this worker, never another process that reused it.
        var pid: Int32?
        var restarts = 0
        /// The worker exited with ``WorkerPool/refusedExitStatus``: its broker refused it for good, so the slot is
        /// not restarted (the same executable would be refused again) until the pool is resized or restarted.
        var refused = false
    }

    struct State {
        var slots: [Int: Slot] = [:]
        var stopping = false
        var supervising = false
    }

    let configuration: PoolConfiguration
    let logger: Logger
    private let state = Mutex(State())
    private let slotStarts: AsyncStream<Int>
    private let slotStartsContinuation: AsyncStream<Int>.Continuation
    private let autoscalerBox = Mutex<PoolAutoscaler?>(nil)

    /// What the pool learns from its broker (``PoolConfiguration/broker``) and its autoscaling state, once it runs.
    public var brokerView: PoolAutoscaler.Status? { autoscalerBox.withLock { $0 }?.status }

    public init(configuration: PoolConfiguration, logger: Logger = Logger(label: "concierge.pool")) {
        self.configuration = configuration
        self.logger = logger
        (slotStarts, slotStartsContinuation) = AsyncStream.makeStream()
    }

    /// Number of workers the pool keeps running now.
    public var size: Int { state.withLock { $0.slots.values.filter(\.wanted).count } }

    /// Process ids of the workers running now, by slot.
    public var processIdentifiers: [Int: Int32] {
        state.withLock { state in state.slots.compactMapValues { $0.wanted ? $0.pid : nil } }
    }

    /// The exit status (`EX_CONFIG`) with which a worker says its broker refused it for good: its definition differs
    /// from the one served under the same version (`definition-mismatch`, PROTOCOL.md 5.16) or its identity may
    /// not serve its types (`registration-forbidden`). The pool does not restart such a worker: it would be refused
    /// again, and a crash loop would hide that the pool runs below its size.
    public static let refusedExitStatus: Int32 = 78

    /// The slots whose worker its broker refused for good (``refusedExitStatus``), with their workers' names.
    public var refusedSlots: [Int: String] {
        state.withLock { state in
            var slots: [Int: String] = [:]
            for (slot, entry) in state.slots where entry.wanted && entry.refused {
                slots[slot] = workerName(slot: slot)
            }
            return slots
        }
    }

    /// Total restarts of crashed workers so far.
    public var restarts: Int { state.withLock { $0.slots.values.reduce(0) { $0 + $1.restarts } } }

    /// The worker name a slot's process gets (`CONCIERGE_WORKER_NAME`): `<namePrefix>-<slot>`.
    public func workerName(slot: Int) -> String { "\(configuration.namePrefix)-\(slot)" }

    /// The slots the pool keeps running now, with their workers' names.
    public var wantedSlots: [Int: String] {
        state.withLock { state in
            var slots: [Int: String] = [:]
            for (slot, entry) in state.slots where entry.wanted { slots[slot] = workerName(slot: slot) }
            return slots
        }
    }

    /// The names of every worker in the pool's table: wanted ones, and stopped ones that have not exited yet.
    public var workerNames: Set<String> {
        state.withLock { state in Set(state.slots.keys.map { workerName(slot: $0) }) }
    }

    /// Worker processes alive now (draining ones included), and wanted slots whose process has started.
    public var processCounts: (running: Int, started: Int) {
        state.withLock { state in
            (state.slots.values.count { $0.pid != nil }, state.slots.values.count { $0.wanted && $0.pid != nil })
        }
    }

    /// Whether ``run()`` is supervising workers now (for `/livez`).
    public var isSupervising: Bool { state.withLock { $0.supervising } }

    /// Stops one slot's worker (scale-down picks an idle one): the slot is no longer wanted, and its worker gets
    /// SIGTERM, drains (it finishes any job it holds) and exits; it is never killed. False when the slot is not
    /// wanted (already stopping, or unknown).
    @discardableResult
    public func stop(slot: Int) -> Bool {
        let stopped = state.withLock { state -> Bool in
            guard !state.stopping, state.slots[slot]?.wanted == true else { return false }
            state.slots[slot]?.wanted = false
            if let pid = state.slots[slot]?.pid { kill(pid, SIGTERM) }  // under the lock: see ``Slot/pid``
            if state.slots[slot]?.refused == true { state.slots[slot] = nil }  // no supervisor runs for it
            return true
        }
        if stopped {
            logger.info("pool resized", metadata: ["size": "\(size)", "stopped": "\(workerName(slot: slot))"])
        }
        return stopped
    }

    /// Grows or shrinks the pool. New workers start at once; removed ones (the highest slots) drain and exit. Slots
    /// whose worker its broker refused (``refusedSlots``) are tried again: a resize is how an operator says the
    /// cause is fixed.
    public func resize(to newSize: Int) {
        let newSize = max(0, newSize)
        let (start, stopped) = state.withLock { state -> ([Int], Int) in
            guard !state.stopping else { return ([], 0) }
            var retried: [Int] = []
            for (slot, entry) in state.slots where entry.refused {
                state.slots[slot]?.refused = false
                // No supervisor runs for a refused slot: an unwanted one goes, a wanted one starts again.
                if entry.wanted { retried.append(slot) } else { state.slots[slot] = nil }
            }
            let wanted = state.slots.filter { $0.value.wanted }.keys.sorted()
            let removed = newSize < wanted.count ? Array(wanted.suffix(wanted.count - newSize)) : []
            for slot in removed {
                state.slots[slot]?.wanted = false
                if let pid = state.slots[slot]?.pid { kill(pid, SIGTERM) }  // under the lock: see ``Slot/pid``
                if retried.contains(slot) { state.slots[slot] = nil }
            }
            retried.removeAll { removed.contains($0) }
            if newSize > wanted.count {
                var fresh: [Int] = []
                var slot = 0
                while wanted.count + fresh.count < newSize {
                    if state.slots[slot] == nil {
                        state.slots[slot] = Slot()
                        fresh.append(slot)
                    }
                    slot += 1
                }
                return (retried + fresh, 0)
            }
            return (retried, removed.count)
        }
        for slot in start { slotStartsContinuation.yield(slot) }
        if !start.isEmpty || stopped > 0 {
            logger.info("pool resized", metadata: ["size": "\(newSize)"])
        }
    }

    public func run() async throws {
        let control = try configuration.controlEndpoint.map { try PoolControl(endpoint: $0, pool: self) }
        let autoscaler = configuration.broker.map { PoolAutoscaler(pool: self, broker: $0) }
        state.withLock { $0.supervising = true }
        defer { state.withLock { $0.supervising = false } }
        autoscalerBox.withLock { $0 = autoscaler }
        resize(to: configuration.size)
        await withTaskCancellationHandler {
            await withTaskGroup(of: Void.self) { group in
                if let control {
                    group.addTask { await control.run() }
                }
                if let autoscaler {
                    group.addTask { await autoscaler.run() }
                }
                await withGracefulShutdownHandler {
                    for await slot in slotStarts {
                        group.addTask { await self.supervise(slot: slot) }
                    }
                } onGracefulShutdown: {
                    self.stopAll()
                }
                control?.stop()
                autoscaler?.stop()
                await group.waitForAll()
            }
        } onCancel: {
            self.stopAll()
        }
    }

    private func stopAll() {
        let running = state.withLock { state -> Int in
            state.stopping = true
            for key in state.slots.keys { state.slots[key]?.wanted = false }
            return signalAll(SIGTERM, &state)
        }
        logger.info("pool stopping; workers drain", metadata: ["workers": "\(running)"])
        slotStartsContinuation.finish()
        let timeout = configuration.stopTimeout
        Thread.detachNewThread { [self] in
            Thread.sleep(forTimeInterval: Double(timeout.nanoseconds) / 1e9)
            state.withLock { _ = signalAll(SIGKILL, &$0) }
        }
    }

    /// Sends `signal` to every worker in the table; call it under the lock (see ``Slot/pid``). Returns how many.
    private func signalAll(_ signal: Int32, _ state: inout State) -> Int {
        let pids = state.slots.values.compactMap(\.pid)
        for pid in pids { kill(pid, signal) }
        return pids.count
    }

    /// Calls `body` with the pids in the table, by slot, under the pool's lock (tests: while `body` runs, no pid
    /// leaves the table).
    func withWorkerTable<R: Sendable>(_ body: ([Int: Int32]) -> R) -> R {
        state.withLock { state in body(state.slots.compactMapValues(\.pid)) }
    }

    /// Returns once process `pid`, a child of this process, has exited, without reaping it (`waitid` with
    /// `WNOWAIT`): until it is reaped, its pid cannot name another process. Blocks a thread of its own meanwhile.
    static func waitForExit(of pid: Int32) async {
        await SocketThread.run(name: "concierge-pool-wait") {
            var info = siginfo_t()
            // EINTR: wait again. Any other failure (ECHILD: not a child, or already reaped) means there is
            // nothing left to wait for.
            while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) == -1 && errno == EINTR {}
        }
    }

    /// Keeps one slot's worker running until the slot is no longer wanted.
    private func supervise(slot: Int) async {
        var delay = configuration.restartInitialDelay
        while state.withLock({ $0.slots[slot]?.wanted == true }) {
            let started = MonotonicTime.now()
            var environment: Environment = .inherit
            var variables: [Environment.Key: String?] = [:]
            for (name, value) in configuration.environment { variables[Environment.Key(stringLiteral: name)] = value }
            environment = environment.updating(variables)
            environment = environment.updating([
                "CONCIERGE_WORKER_NAME": "\(configuration.namePrefix)-\(slot)",
                // Lets a worker notice that its pool died and leave instead of lingering (see ParentWatch).
                "CONCIERGE_POOL_PID": "\(getpid())",
            ])
            do {
                let result = try await Subprocess.run(
                    .path(FilePath(configuration.executable)),
                    arguments: Arguments(configuration.arguments),
                    environment: environment,
                    input: .none,
                    output: .currentStandardOutput,
                    error: .currentStandardError
                ) { execution in
                    let pid = execution.processIdentifier.value
                    state.withLock { state in
                        state.slots[slot]?.pid = pid
                        if state.slots[slot]?.wanted != true { kill(pid, SIGTERM) }
                    }
                    logger.info("worker started", metadata: ["slot": "\(slot)", "pid": "\(pid)"])
                    // Subprocess reaps the worker only after this closure returns: its pid leaves the table first,
                    // so that no signal sent under the lock can reach a process that reused it.
                    await Self.waitForExit(of: pid)
                    state.withLock { $0.slots[slot]?.pid = nil }
                }
                let wanted = state.withLock { $0.slots[slot]?.wanted == true }
                if !wanted {
                    logger.info(
                        "worker stopped", metadata: ["slot": "\(slot)", "status": "\(result.terminationStatus)"])
                    break
                }
                if case .exited(let code) = result.terminationStatus, code == Self.refusedExitStatus {
                    state.withLock { $0.slots[slot]?.refused = true }
                    logger.error(
                        "\("worker refused by its broker; not restarting it (the same executable would be refused again: see the worker's error above, fix its definition's version or its permissions, then resize or restart the pool)")",
                        metadata: ["slot": "\(slot)", "worker": "\(workerName(slot: slot))"])
                    return
                }
                logger.warning(
                    "worker exited; restarting",
                    metadata: ["slot": "\(slot)", "status": "\(result.terminationStatus)", "delay": "\(delay)"]
                )
            } catch {
                state.withLock { $0.slots[slot]?.pid = nil }
                logger.error("cannot start worker", metadata: ["slot": "\(slot)", "error": "\(error)"])
            }
            if MonotonicTime.now() - started >= configuration.stableAfter.nanoseconds {
                delay = configuration.restartInitialDelay
            }
            try? await Task.sleep(for: delay)
            delay = min(delay * 2, configuration.restartMaxDelay)
            state.withLock { $0.slots[slot]?.restarts += 1 }
        }
        state.withLock { state in
            if state.slots[slot]?.wanted == false { state.slots[slot] = nil }
        }
    }
}
