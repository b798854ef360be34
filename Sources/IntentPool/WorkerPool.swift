import Foundation
import IntentWire
public import Logging
public import ServiceLifecycle
import Subprocess
import Synchronization
import SystemPackage

#if canImport(Glibc)
    import Glibc
#endif

/// Supervises N worker processes as a ServiceLifecycle `Service`: starts them, restarts any that dies (with
/// exponential backoff, so a crash loop cannot spin), and can be resized while it runs with ``resize(to:)``:
/// added workers start at once, removed ones get SIGTERM and drain before they exit.
///
/// On graceful shutdown every worker gets SIGTERM (and SIGKILL after ``PoolConfiguration/stopTimeout``).
public final class WorkerPool: Service, Sendable {
    struct Slot {
        var wanted = true
        var pid: Int32?
        var restarts = 0
    }

    struct State {
        var slots: [Int: Slot] = [:]
        var stopping = false
    }

    let configuration: PoolConfiguration
    let logger: Logger
    private let state = Mutex(State())
    private let slotStarts: AsyncStream<Int>
    private let slotStartsContinuation: AsyncStream<Int>.Continuation

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

    /// Total restarts of crashed workers so far.
    public var restarts: Int { state.withLock { $0.slots.values.reduce(0) { $0 + $1.restarts } } }

    /// Grows or shrinks the pool. New workers start at once; removed ones (the highest slots) drain and exit.
    public func resize(to newSize: Int) {
        let newSize = max(0, newSize)
        let (start, stop) = state.withLock { state -> ([Int], [Int32]) in
            guard !state.stopping else { return ([], []) }
            let wanted = state.slots.filter { $0.value.wanted }.keys.sorted()
            if newSize > wanted.count {
                var start: [Int] = []
                var slot = 0
                while wanted.count + start.count < newSize {
                    if state.slots[slot] == nil {
                        state.slots[slot] = Slot()
                        start.append(slot)
                    }
                    slot += 1
                }
                return (start, [])
            }
            var stop: [Int32] = []
            for slot in wanted.suffix(wanted.count - newSize) {
                state.slots[slot]?.wanted = false
                if let pid = state.slots[slot]?.pid { stop.append(pid) }
            }
            return ([], stop)
        }
        for slot in start { slotStartsContinuation.yield(slot) }
        for pid in stop { kill(pid, SIGTERM) }
        if !start.isEmpty || !stop.isEmpty {
            logger.info("pool resized", metadata: ["size": "\(newSize)"])
        }
    }

    public func run() async throws {
        let control = try configuration.controlEndpoint.map { try PoolControl(endpoint: $0, pool: self) }
        resize(to: configuration.size)
        await withTaskCancellationHandler {
            await withTaskGroup(of: Void.self) { group in
                if let control {
                    group.addTask { await control.run() }
                }
                await withGracefulShutdownHandler {
                    for await slot in slotStarts {
                        group.addTask { await self.supervise(slot: slot) }
                    }
                } onGracefulShutdown: {
                    self.stopAll()
                }
                control?.stop()
                await group.waitForAll()
            }
        } onCancel: {
            self.stopAll()
        }
    }

    private func stopAll() {
        let pids = state.withLock { state -> [Int32] in
            state.stopping = true
            for key in state.slots.keys { state.slots[key]?.wanted = false }
            return state.slots.values.compactMap(\.pid)
        }
        logger.info("pool stopping; workers drain", metadata: ["workers": "\(pids.count)"])
        for pid in pids { kill(pid, SIGTERM) }
        slotStartsContinuation.finish()
        let timeout = configuration.stopTimeout
        Thread.detachNewThread { [self] in
            Thread.sleep(forTimeInterval: Double(timeout.nanoseconds) / 1e9)
            for pid in state.withLock({ $0.slots.values.compactMap(\.pid) }) { kill(pid, SIGKILL) }
        }
    }

    /// Keeps one slot's worker running until the slot is no longer wanted.
    private func supervise(slot: Int) async {
        var delay = configuration.restartInitialDelay
        while state.withLock({ $0.slots[slot]?.wanted == true }) {
            let started = MonotonicTime.now()
            var environment: Environment = .inherit
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
                    let stillWanted = state.withLock { state -> Bool in
                        state.slots[slot]?.pid = pid
                        return state.slots[slot]?.wanted == true
                    }
                    if !stillWanted { kill(pid, SIGTERM) }
                    logger.info("worker started", metadata: ["slot": "\(slot)", "pid": "\(pid)"])
                }
                state.withLock { $0.slots[slot]?.pid = nil }
                let wanted = state.withLock { $0.slots[slot]?.wanted == true }
                if !wanted {
                    logger.info(
                        "worker stopped", metadata: ["slot": "\(slot)", "status": "\(result.terminationStatus)"])
                    break
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
