public import IntentKit
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Handles ``EchoIntent``: echoes the text with proof of which process and which handler instance answered.
///
/// In `delayPhase` (handle when absent) it waits `delayMs` (cancellable `Task.sleep`), then burns `cpuMs` of CPU in
/// a busy loop, then throws `failWith` if set, then crashes the whole worker process if `crash` is true (a Swift trap,
/// for tests of the broker's crash quarantine, PROTOCOL.md section 6.7). Every phase method counts itself in ``jobsSeen``; confirm and handle
/// answer data `{"text", "pid", "instance", "jobsSeen", "worker", "attempt"}`, plus `"idempotencyKey"` when the job
/// carries one (``HandlerContext/attempt`` and ``HandlerContext/idempotencyKey``: what the handler saw, for tests of
/// keyed requests) and `"traceparent"` when it carries a trace context (``HandlerContext/traceContext``, for tests of
/// tracing, Docs/TRACING.md). With fresh handlers per job, `instance` differs between jobs and `jobsSeen` is always 1.
///
/// Cancellation: the delay is a cancellable `Task.sleep`, so a cancelled job stops there (answered `cancelled`);
/// the CPU burn does not look at cancellation.
///
/// Resolution: the default for every parameter (durations outside the declared 0...600000 never reach the handler:
/// validation answers `out-of-range`). The path without delay is kept cheap: no formatters, a handful of
/// allocations.
public final class EchoHandler: IntentHandler {
    public typealias Intent = EchoIntent

    /// The error thrown for `failWith`; its description is the message.
    public struct Failure: Error, CustomStringConvertible {
        /// The message.
        public let message: String
        public var description: String { message }
    }

    private static let instances = Atomic<Int>(0)
    private static let pid = Int64(getpid())

    /// This handler's number: 1 for the first handler made in this process, 2 for the next, ...
    public let instance: Int
    private let seen = Atomic<Int>(0)

    /// How many phase methods have run on this instance.
    public var jobsSeen: Int { seen.load(ordering: .relaxed) }

    /// Creates a handler with the next instance number.
    public init() {
        instance = Self.instances.wrappingAdd(1, ordering: .relaxed).newValue
    }

    public func resolve(intent: EchoIntent, context: HandlerContext) async throws -> Resolutions<EchoIntent> {
        seen.wrappingAdd(1, ordering: .relaxed)
        if Self.acts(in: .resolve, intent: intent) { try await act(in: .resolve, intent: intent) }
        return Resolutions<EchoIntent>()
    }

    public func confirm(intent: EchoIntent, context: HandlerContext) async throws -> ConfirmResponse<EchoIntent> {
        let count = seen.wrappingAdd(1, ordering: .relaxed).newValue
        if Self.acts(in: .confirm, intent: intent) { try await act(in: .confirm, intent: intent) }
        return ConfirmResponse(code: .ready, data: proof(intent, context, count))
    }

    public func handle(intent: EchoIntent, context: HandlerContext) async throws -> HandleResponse<EchoIntent> {
        let count = seen.wrappingAdd(1, ordering: .relaxed).newValue
        if Self.acts(in: .handle, intent: intent) { try await act(in: .handle, intent: intent) }
        return HandleResponse(code: .success, data: proof(intent, context, count))
    }

    private func proof(_ intent: EchoIntent, _ context: HandlerContext, _ count: Int) -> JSONObject {
        var data: JSONObject = [
            "text": intent.text.map { .string($0) } ?? .null,
            "pid": .int(Self.pid),
            "instance": .int(Int64(instance)),
            "jobsSeen": .int(Int64(count)),
            "worker": .string(context.workerName),
            "attempt": .int(Int64(context.attempt)),
        ]
        if let key = context.idempotencyKey { data["idempotencyKey"] = .string(key) }
        if let trace = context.traceContext { data["traceparent"] = .string(trace.traceparent) }
        return data
    }

    /// Whether `phase` has anything to do besides answering (a delay, a CPU burn or a failure): the plain echo skips
    /// the call to ``act(in:intent:)``, an async call that costs a task frame and an executor check per job.
    private static func acts(in phase: EchoPhase, intent: EchoIntent) -> Bool {
        (intent.delayPhase ?? .handle) == phase
            && ((intent.delayMs ?? 0) > 0 || (intent.cpuMs ?? 0) > 0 || intent.failWith != nil || intent.crash == true)
    }

    private func act(in phase: EchoPhase, intent: EchoIntent) async throws {
        guard (intent.delayPhase ?? .handle) == phase else { return }
        let delay = intent.delayMs ?? 0
        let cpu = intent.cpuMs ?? 0
        if delay > 0 { try await Task.sleep(for: .milliseconds(delay)) }
        if cpu > 0 { Self.burn(milliseconds: cpu) }
        if let message = intent.failWith { throw Failure(message: message) }
        if intent.crash == true { fatalError("Echo was asked to crash its worker (crash: true)") }
    }

    /// Keeps this thread busy for `milliseconds`.
    private static func burn(milliseconds: Int) {
        let clock = ContinuousClock()
        let end = clock.now + .milliseconds(milliseconds)
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        while clock.now < end {
            for _ in 0..<1000 { state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407 }
        }
        blackHole(state)
    }

    @inline(never)
    private static func blackHole(_ value: UInt64) { _ = value }
}
