import IntentKit
import Synchronization

/// A test-only intent whose handler stalls in one phase (`phase`, handle when absent) in the way `behaviour` says:
/// - `sleep`: awaits `Task.sleep(for: .seconds(600))` (stops with `CancellationError` when cancelled);
/// - `ignore`: the same sleep with `try?`, then answers anyway (ignores the cancellation);
/// - `throw`: throws `CancellationError` at once, cancelled or not;
/// - `onCancel`: the sleep inside `withTaskCancellationHandler`, whose `onCancel` the probe records.
struct StallIntent: Intent, Hashable {
    static let intentType = "Stall"
    static let parameters: [IntentParameter<StallIntent>] = [
        .init("behaviour", \.behaviour), .init("phase", \.phase),
    ]
    var identifier: String?
    var behaviour: String?
    var phase: String?
}

/// What the stalling handlers did, observed by the tests (no sleeping to order events).
final class StallProbe: Sendable {
    /// One element each time a handler reached the phase it stalls in.
    let started: AsyncStream<Void>
    private let startedContinuation: AsyncStream<Void>.Continuation
    private let state = Mutex<(handlersMade: Int, onCancelRan: Bool)>((0, false))

    init() {
        (started, startedContinuation) = AsyncStream.makeStream(of: Void.self)
    }

    /// How many handlers the provider made.
    var handlersMade: Int { state.withLock { $0.handlersMade } }
    /// Whether a `withTaskCancellationHandler`'s `onCancel` ran.
    var onCancelRan: Bool { state.withLock { $0.onCancelRan } }

    func madeHandler() { state.withLock { $0.handlersMade += 1 } }
    func ranOnCancel() { state.withLock { $0.onCancelRan = true } }
    func didStart() { startedContinuation.yield() }

    /// Returns once a handler has reached its stalling point.
    func waitUntilStarted() async {
        for await _ in started { return }
    }
}

/// The handler of ``StallIntent``.
struct StallHandler: IntentHandler {
    let probe: StallProbe

    func resolve(intent: StallIntent, context: HandlerContext) async throws -> Resolutions<StallIntent> {
        try await stall(intent, in: .resolve)
        return Resolutions<StallIntent>()
    }

    func confirm(intent: StallIntent, context: HandlerContext) async throws -> ConfirmResponse<StallIntent> {
        try await stall(intent, in: .confirm)
        return ConfirmResponse(code: .ready, data: ["confirmed": true])
    }

    func handle(intent: StallIntent, context: HandlerContext) async throws -> HandleResponse<StallIntent> {
        try await stall(intent, in: .handle)
        return HandleResponse(code: .success, data: ["done": true])
    }

    private func stall(_ intent: StallIntent, in phase: IntentPhase) async throws {
        guard (intent.phase ?? "handle") == phase.rawValue else { return }
        probe.didStart()
        switch intent.behaviour {
        case "sleep":
            try await Task.sleep(for: .seconds(600))
        case "ignore":
            try? await Task.sleep(for: .seconds(600))
        case "throw":
            throw CancellationError()
        case "onCancel":
            let probe = self.probe
            try await withTaskCancellationHandler {
                try await Task.sleep(for: .seconds(600))
            } onCancel: {
                probe.ranOnCancel()
            }
        default:
            break
        }
    }
}

extension HandlerProvider {
    /// A provider with only the stalling handler, reporting to `probe`.
    static func stall(_ probe: StallProbe) -> HandlerProvider {
        var provider = HandlerProvider()
        provider.register {
            probe.madeHandler()
            return StallHandler(probe: probe)
        }
        return provider
    }
}
