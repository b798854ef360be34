import Synchronization

/// A cancellation a test controls: ``cancel()`` cancels the job running under it now (the worker cancels a job's
/// task the same way when the broker cancels the job) and every job started under it later.
///
/// Handlers observe it as they observe a real cancellation: `Task.isCancelled`, `Task.checkCancellation()`,
/// `withTaskCancellationHandler` and cancellable awaits such as `Task.sleep`. A handler that stops by throwing
/// `CancellationError` gives a turn whose outcome is ``JobOutcome/cancelled``.
///
/// ```swift
/// let context = TestHandlerContext(idempotencyKey: "pay-1")
/// var conversation = IntentConversation(provider: provider, intent: intent, context: context)
/// Task {
///     await probe.handleStarted()  // however your handler tells the test it is running
///     context.cancellation.cancel()
/// }
/// let turn = try await conversation.send()
/// #expect(turn.outcome == .cancelled)
/// ```
public final class TestCancellation: Sendable {
    private struct State {
        var isCancelled = false
        var nextID = 0
        var running: [Int: @Sendable () -> Void] = [:]
    }

    private let state = Mutex(State())

    /// Creates a cancellation that has not been cancelled.
    public init() {}

    /// Whether ``cancel()`` was called.
    public var isCancelled: Bool { state.withLock { $0.isCancelled } }

    /// Cancels the job running now, if any, and every job started later.
    public func cancel() {
        let running = state.withLock { state in
            state.isCancelled = true
            return Array(state.running.values)
        }
        for cancelTask in running { cancelTask() }
    }

    /// Runs `operation` in a task of its own that ``cancel()`` cancels (as does cancelling the calling task), and
    /// returns its result.
    func run<T: Sendable>(_ operation: @escaping @Sendable () async -> T) async -> T {
        let task = Task { await operation() }
        let (id, cancelled) = state.withLock { state in
            let id = state.nextID
            state.nextID += 1
            state.running[id] = { task.cancel() }
            return (id, state.isCancelled)
        }
        if cancelled { task.cancel() }
        let result = await withTaskCancellationHandler {
            await task.value
        } onCancel: {
            task.cancel()
        }
        _ = state.withLock { $0.running.removeValue(forKey: id) }
        return result
    }
}
