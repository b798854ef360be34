public import IntentWorker
public import ServiceLifecycle

/// The watch on the worker's pool as a ServiceLifecycle `Service`: it returns when the pool process is gone, so that
/// a group that runs it with `successTerminationBehavior: .gracefullyShutdownGroup` shuts down gracefully and the
/// worker beside it drains. It returns at the group's graceful shutdown too; without a pool pid it waits for that
/// shutdown (and throws `CancellationError` if the group is cancelled first).
extension ParentWatch: Service {
    public func run() async throws {
        guard poolPID != nil else {
            try await gracefulShutdown()
            return
        }
        _ = await cancelWhenGracefulShutdown { await self.waitUntilPoolGone() }
    }
}
