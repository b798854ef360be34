import IntentWire

/// When and how often ``ConciergeClient/request(intent:phase:deadline:requestID:idempotencyKey:retry:traceContext:events:)`` sends a
/// request again after a failure that may be temporary.
///
/// Retried: the error replies `busy`, `worker-lost`, `timeout`, `outcome-unknown` and `unavailable`, and the
/// client's own endings ``ClientError/Code/brokerRestarted``, ``ClientError/Code/connectionLost`` and
/// ``ClientError/Code/throttled`` (see
/// ``isRetryable(code:)``). Never retried: `idempotency-conflict`, `cancelled`, validation errors (`bad-body`,
/// `invalid-type`, ...), a handler's failure, and every other error. Every attempt carries the same idempotency key
/// and the same body, so the broker runs the intent at most once per key (PROTOCOL.md 4.10.1); each attempt has a
/// request id of its own.
///
/// `unavailable` differs from the others: the broker answers it when it cannot record work (its PostgreSQL journal is
/// unreachable, or it is giving up leadership), and it accepted nothing, so sending the request again is always safe,
/// with or without an idempotency key. After the other retryable endings the request may have run (or may still be
/// running): only the key keeps a retry from running it twice.
///
/// The wait before retry *n* (n = 1 for the second attempt) is
/// `min(maxBackoff, initialBackoff × multiplier^(n-1))`, less a random part of up to `jitter` of it: with the
/// defaults 100 ms, 200 ms, 400 ms, ... up to 2 s, each reduced by up to 20 %. The jitter only ever shortens a wait,
/// so `maxBackoff` is a true upper bound, and clients that failed together do not retry together.
///
/// ```swift
/// let reply = try await client.request(intent: payment, phase: .handle, retry: RetryPolicy(maxAttempts: 5))
/// print(reply.attempts)  // 1 when the first attempt was answered
/// ```
public struct RetryPolicy: Sendable, Hashable {
    /// Attempts in all, the first included (1: no retry).
    public var maxAttempts: Int
    /// The wait before the first retry (before jitter).
    public var initialBackoff: Duration
    /// Each further wait is this many times the one before (1: constant).
    public var multiplier: Double
    /// No wait is longer than this.
    public var maxBackoff: Duration
    /// The fraction (0...1) of each wait that is random: a wait `w` becomes a uniform value in
    /// `w × (1 - jitter) ... w`. 0: no jitter; 1: "full jitter", anywhere from 0 to `w`.
    public var jitter: Double

    /// A policy; the values are clamped to sensible ranges (at least 1 attempt, no negative wait, a multiplier of at
    /// least 1, a jitter in 0...1).
    public init(
        maxAttempts: Int = 3,
        initialBackoff: Duration = .milliseconds(100),
        multiplier: Double = 2,
        maxBackoff: Duration = .seconds(2),
        jitter: Double = 0.2
    ) {
        self.maxAttempts = max(1, maxAttempts)
        self.initialBackoff = max(.zero, initialBackoff)
        self.multiplier = multiplier.isFinite ? max(1, multiplier) : 1
        self.maxBackoff = max(.zero, maxBackoff)
        self.jitter = jitter.isFinite ? min(1, max(0, jitter)) : 0
    }

    /// The error codes that are retried: the broker's `busy`, `worker-lost`, `timeout`, `outcome-unknown` and
    /// `unavailable`, and the client's `broker-restarted`, `connection-lost` and `throttled` (each a failure after
    /// which the same key may run, or has run, once; after `unavailable` and `throttled` nothing ran).
    public static let retryableCodes: Set<String> = [
        WireErrorCode.busy.rawValue, WireErrorCode.workerLost.rawValue, WireErrorCode.timeout.rawValue,
        WireErrorCode.outcomeUnknown.rawValue, WireErrorCode.unavailable.rawValue,
        ClientError.Code.brokerRestarted.rawValue, ClientError.Code.connectionLost.rawValue,
        ClientError.Code.throttled.rawValue,
    ]

    /// Whether an error with this code (an error reply's `code`, or a ``ClientError/Code``'s raw value) is retried.
    public static func isRetryable(code: String) -> Bool { retryableCodes.contains(code) }

    /// Whether a reply is a retryable ending (an error reply with a retryable code).
    public static func isRetryable(_ reply: Reply) -> Bool {
        reply.status == .error && reply.errorCode.map(isRetryable(code:)) == true
    }

    /// The wait before retry `retry` (1 for the second attempt) without jitter: `initialBackoff ×
    /// multiplier^(retry-1)`, at most `maxBackoff`.
    public func baseBackoff(beforeRetry retry: Int) -> Duration {
        let initial = Double(initialBackoff.nanosecondsClamped)
        let cap = Double(maxBackoff.nanosecondsClamped)
        let value = min(cap, initial * pow(multiplier, max(0, retry - 1)))
        return .nanoseconds(Int64(value.isFinite ? value : cap))
    }

    /// The wait before retry `retry` (1 for the second attempt), jitter included: a uniform value in
    /// `base × (1 - jitter) ... base`, where `base` is ``baseBackoff(beforeRetry:)``.
    public func backoff(beforeRetry retry: Int, using generator: inout some RandomNumberGenerator) -> Duration {
        let base = baseBackoff(beforeRetry: retry).nanosecondsClamped
        guard jitter > 0, base > 0 else { return .nanoseconds(base) }
        let fraction = Double.random(in: 0...1, using: &generator)
        return .nanoseconds(base - Int64(Double(base) * jitter * fraction))
    }

    /// ``backoff(beforeRetry:using:)`` with the system's random generator.
    public func backoff(beforeRetry retry: Int) -> Duration {
        var generator = SystemRandomNumberGenerator()
        return backoff(beforeRetry: retry, using: &generator)
    }
}

extension Duration {
    /// The duration in nanoseconds, clamped to `0...Int64.max`.
    fileprivate var nanosecondsClamped: Int64 {
        let (seconds, attoseconds) = components
        guard seconds >= 0 else { return 0 }
        let (product, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        guard !overflow else { return .max }
        let (sum, overflow2) = product.addingReportingOverflow(attoseconds / 1_000_000_000)
        return overflow2 ? .max : sum
    }
}

/// `base` raised to a whole power (no Foundation).
private func pow(_ base: Double, _ exponent: Int) -> Double {
    var result = 1.0
    var factor = base
    var exponent = exponent
    while exponent > 0 {
        if exponent & 1 == 1 { result *= factor }
        factor *= factor
        exponent >>= 1
        if result.isInfinite { return result }
    }
    return result
}
