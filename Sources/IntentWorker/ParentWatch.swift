public import Logging

#if canImport(Glibc)
    import Glibc
#endif

/// Watches the pool that started this worker (IntentPool's `WorkerPool` passes its pid in `CONCIERGE_POOL_PID`):
/// when the pool process is gone (the worker was re-parented), ``waitUntilPoolGone()`` returns true, and the worker's
/// process then drains the worker (``Worker/stop()``) and exits instead of lingering without a supervisor. Without
/// `CONCIERGE_POOL_PID` it just waits. With IntentWorkerLifecycle it is also a ServiceLifecycle `Service` that returns
/// when the pool is gone, to run beside the worker with the `.gracefullyShutdownGroup` success behaviour.
public struct ParentWatch: Sendable {
    /// The pool's pid, from `CONCIERGE_POOL_PID`; nil when no pool started this process.
    public let poolPID: Int32?
    let logger: Logger

    public init(environment: [String: String], logger: Logger) {
        poolPID = environment["CONCIERGE_POOL_PID"].flatMap { Int32($0) }
        self.logger = logger
    }

    /// Looks every 500 ms whether the pool is still this process's parent. Returns true when it is not (after
    /// logging a warning), false when the calling task was cancelled first; without a pool pid it waits for
    /// cancellation.
    public func waitUntilPoolGone() async -> Bool {
        guard let poolPID else {
            while !Task.isCancelled { try? await Task.sleep(for: .seconds(3600)) }
            return false
        }
        while !Task.isCancelled {
            if getppid() != poolPID {
                logger.warning("the pool that started this worker is gone; leaving", metadata: ["pool": "\(poolPID)"])
                return true
            }
            try? await Task.sleep(for: .milliseconds(500))
        }
        return false
    }
}
