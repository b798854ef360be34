import IntentKit
import Synchronization

/// A test-only intent for the worker's version-02 and 03 tests. Its handle, by `mode`:
/// - `sleep`: awaits `Task.sleep(for: .seconds(600))` (stops with `CancellationError` when cancelled);
/// - `ignore`: the same sleep with `try?`, then answers success anyway;
/// - anything else: answers at once.
///
/// Its resolve, in mode `hold`, does the same as handle's `ignore` (and resolves nothing itself); in every other
/// mode it answers at once. Confirm always answers `ready`.
///
/// Every answer's data is what the handler's context held: `{"attempt", "idempotencyKey"?, "traceparent"?,
/// "tracestate"?}`.
struct WaitIntent: Intent, Hashable {
    static let intentType = "Wait"
    static let parameters: [IntentParameter<WaitIntent>] = [.init("mode", \.mode)]
    var identifier: String?
    var mode: String?
}

/// What the handlers did, for the tests to wait on (never sleeping to order events).
final class WaitProbe: Sendable {
    private let started = Mutex<Int>(0)

    private let resolving = Mutex<Int>(0)

    /// How many handle phases have started.
    var handlesStarted: Int { started.withLock { $0 } }
    /// How many resolve phases have started.
    var resolvesStarted: Int { resolving.withLock { $0 } }

    func handleStarted() { started.withLock { $0 += 1 } }
    func resolveStarted() { resolving.withLock { $0 += 1 } }
}

/// The handler of ``WaitIntent``.
struct WaitHandler: IntentHandler {
    let probe: WaitProbe

    func resolve(intent: WaitIntent, context: HandlerContext) async throws -> Resolutions<WaitIntent> {
        probe.resolveStarted()
        if intent.mode == "hold" { try? await Task.sleep(for: .seconds(600)) }
        return Resolutions()
    }

    func handle(intent: WaitIntent, context: HandlerContext) async throws -> HandleResponse<WaitIntent> {
        probe.handleStarted()
        switch intent.mode {
        case "sleep": try await Task.sleep(for: .seconds(600))
        case "ignore": try? await Task.sleep(for: .seconds(600))
        default: break
        }
        var data: JSONObject = ["attempt": .int(Int64(context.attempt))]
        if let key = context.idempotencyKey { data["idempotencyKey"] = .string(key) }
        if let trace = context.traceContext {
            data["traceparent"] = .string(trace.traceparent)
            data["tracestate"] = .string(trace.tracestate)
        }
        return HandleResponse(code: .success, data: data)
    }
}
