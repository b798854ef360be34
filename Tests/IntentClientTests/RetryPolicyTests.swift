import IntentClient
import IntentWire
import Testing

/// ``RetryPolicy``'s waits and the codes it retries.
@Suite struct RetryPolicyTests {
    /// A deterministic generator (SplitMix64), so that jitter tests see many different values reproducibly.
    struct Generator: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    @Test func backoffGrowsByTheMultiplierUpToTheCap() {
        let policy = RetryPolicy(
            maxAttempts: 8, initialBackoff: .milliseconds(100), multiplier: 2, maxBackoff: .seconds(1), jitter: 0)
        let waits = (1...7).map { policy.baseBackoff(beforeRetry: $0) }
        #expect(
            waits == [100, 200, 400, 800, 1000, 1000, 1000].map { Duration.milliseconds($0) })
        var generator = Generator(state: 1)
        // Without jitter the wait is the base wait exactly.
        #expect((1...7).map { policy.backoff(beforeRetry: $0, using: &generator) } == waits)
    }

    @Test func aMultiplierOfThreeAndAHugeRetryNumberStayWithinTheCap() {
        let policy = RetryPolicy(
            maxAttempts: 100, initialBackoff: .milliseconds(10), multiplier: 3, maxBackoff: .milliseconds(500),
            jitter: 0)
        #expect(policy.baseBackoff(beforeRetry: 1) == .milliseconds(10))
        #expect(policy.baseBackoff(beforeRetry: 2) == .milliseconds(30))
        #expect(policy.baseBackoff(beforeRetry: 3) == .milliseconds(90))
        #expect(policy.baseBackoff(beforeRetry: 4) == .milliseconds(270))
        #expect(policy.baseBackoff(beforeRetry: 5) == .milliseconds(500))
        #expect(policy.baseBackoff(beforeRetry: 10_000) == .milliseconds(500))
    }

    @Test func jitterOnlyShortensTheWaitAndSpreadsItOverItsRange() {
        let policy = RetryPolicy(
            maxAttempts: 5, initialBackoff: .milliseconds(200), multiplier: 2, maxBackoff: .seconds(1), jitter: 0.5)
        var generator = Generator(state: 42)
        for retry in 1...4 {
            let base = policy.baseBackoff(beforeRetry: retry)
            let waits = (0..<2000).map { _ in policy.backoff(beforeRetry: retry, using: &generator) }
            #expect(waits.allSatisfy { $0 >= base * 0.5 && $0 <= base }, "retry \(retry), base \(base)")
            // Spread: values near both ends of the range occur (not a constant, not one side only).
            #expect(waits.contains { $0 < base * 0.55 }, "retry \(retry): nothing near the low end")
            #expect(waits.contains { $0 > base * 0.95 }, "retry \(retry): nothing near the base")
        }
    }

    @Test func fullJitterRangesFromZeroToTheBase() {
        let policy = RetryPolicy(initialBackoff: .milliseconds(100), jitter: 1)
        var generator = Generator(state: 7)
        let waits = (0..<2000).map { _ in policy.backoff(beforeRetry: 1, using: &generator) }
        #expect(waits.allSatisfy { $0 >= .zero && $0 <= .milliseconds(100) })
        #expect(waits.contains { $0 < .milliseconds(5) })
    }

    @Test func valuesAreClampedToSensibleRanges() {
        let policy = RetryPolicy(
            maxAttempts: 0, initialBackoff: .milliseconds(-5), multiplier: 0.5, maxBackoff: .seconds(-1), jitter: 3)
        #expect(policy.maxAttempts == 1)
        #expect(policy.initialBackoff == .zero)
        #expect(policy.multiplier == 1)
        #expect(policy.maxBackoff == .zero)
        #expect(policy.jitter == 1)
        #expect(RetryPolicy(jitter: -1).jitter == 0)
        #expect(RetryPolicy(multiplier: .nan).multiplier == 1)
    }

    @Test func theDefaultsAreDocumented() {
        let policy = RetryPolicy()
        #expect(policy.maxAttempts == 3)
        #expect(policy.initialBackoff == .milliseconds(100))
        #expect(policy.multiplier == 2)
        #expect(policy.maxBackoff == .seconds(2))
        #expect(policy.jitter == 0.2)
    }

    @Test(
        arguments: [
            "busy", "worker-lost", "timeout", "outcome-unknown", "unavailable", "broker-restarted", "connection-lost",
        ])
    func temporaryFailuresAreRetried(code: String) {
        #expect(RetryPolicy.isRetryable(code: code))
        let reply = Reply(
            requestID: "r", status: .error, phase: "handle", body: Array(#"{"code":"\#(code)","message":"m"}"#.utf8))
        #expect(RetryPolicy.isRetryable(reply))
    }

    @Test(
        arguments: [
            "idempotency-conflict", "cancelled", "bad-body", "invalid-type", "unknown-parameter", "out-of-range",
            "invalid-enum", "handler-failed", "unknown-intent", "duplicate-request", "malformed", "bad-deadline",
            "too-large", "shutting-down", "internal", "unknown-request", "handshake-failed", "closed", "transport",
            "cancel-unsupported", "",
        ])
    func otherFailuresAreNotRetried(code: String) {
        #expect(!RetryPolicy.isRetryable(code: code))
        let reply = Reply(
            requestID: "r", status: .error, phase: "handle", body: Array(#"{"code":"\#(code)","message":"m"}"#.utf8))
        #expect(!RetryPolicy.isRetryable(reply))
    }

    @Test func aFinalReplyIsNeverRetried() {
        // Even one whose body happens to carry a retryable code.
        let reply = Reply(requestID: "r", status: .final, phase: "handle", body: Array(#"{"code":"busy"}"#.utf8))
        #expect(!RetryPolicy.isRetryable(reply))
    }

    @Test func generatedIdempotencyKeysAreUUIDsAndDiffer() {
        let keys = (0..<100).map { _ in ConciergeClient.makeIdempotencyKey() }
        #expect(Set(keys).count == 100)
        for key in keys {
            let groups = key.split(separator: "-").map(\.count)
            #expect(groups == [8, 4, 4, 4, 12], "\(key)")
            #expect(key.allSatisfy { $0 == "-" || $0.isHexDigit })
        }
    }
}
