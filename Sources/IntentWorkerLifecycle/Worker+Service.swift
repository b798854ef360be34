public import IntentWorker
public import ServiceLifecycle

/// A worker as a ServiceLifecycle `Service`: put it in a `ServiceGroup`, and the group's graceful shutdown (SIGTERM or
/// SIGINT, with `gracefulShutdownSignals: [.sigterm, .sigint]`) drains it as ``Worker/stop()`` does: it takes nothing
/// new, finishes what it has, tells the broker it is leaving, and its `run()` returns. Cancelling the group drains it
/// too.
///
/// ```swift
/// import IntentWorker
/// import IntentWorkerLifecycle
/// import ServiceLifecycle
///
/// let worker = Worker(configuration: .init(), provider: provider)
/// try await ServiceGroup(services: [worker], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger).run()
/// ```
///
/// `WorkerMain` (ConciergeCommandLine) needs none of this: it waits for the signals itself, so a worker package does
/// not build swift-service-lifecycle's `ServiceLifecycle` module and what it depends on.
extension Worker: Service, _WorkerDrainScope {
    /// Runs the worker's loop with a graceful shutdown handler that asks it to drain (called by ``Worker/run()``).
    public func _withDrainTrigger(
        _ operation: () async throws -> Void, onDrain: @escaping @Sendable () -> Void
    ) async throws {
        try await withGracefulShutdownHandler(operation: operation, onGracefulShutdown: onDrain)
    }
}
