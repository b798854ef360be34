public import Logging
public import ServiceLifecycle

#if canImport(Glibc)
    import Glibc
#endif

/// A `Service` for workers started by a ``WorkerPool``: when the pool process is gone (the worker was re-parented),
/// it returns, which makes the service group shut down gracefully — the worker drains and exits instead of
/// lingering without a supervisor. It reads the pool's pid from `CONCIERGE_POOL_PID`; without it, it just waits.
public struct ParentWatch: Service {
    let poolPID: Int32?
    let logger: Logger

    public init(environment: [String: String], logger: Logger) {
        poolPID = environment["CONCIERGE_POOL_PID"].flatMap { Int32($0) }
        self.logger = logger
    }

    public func run() async throws {
        guard let poolPID else {
            try await gracefulShutdown()
            return
        }
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            if getppid() != poolPID {
                logger.warning("the pool that started this worker is gone; leaving", metadata: ["pool": "\(poolPID)"])
                return
            }
            try? await Task.sleep(for: .milliseconds(500))
        }
    }
}
