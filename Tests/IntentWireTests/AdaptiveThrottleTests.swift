import IntentWire
import PropertyBased
import Testing

@Suite struct AdaptiveThrottleTests {
    static let millisecond: UInt64 = 1_000_000

    static func throttle(multiplier: Double, window: Duration = .seconds(10)) throws -> AdaptiveThrottle {
        AdaptiveThrottle(configuration: try .init(multiplier: multiplier, window: window))
    }

    /// A broker that takes `capacity` requests per millisecond and refuses the rest, offered `offered` per
    /// millisecond through `throttle` for `milliseconds`; returns the requests sent and accepted in the second half
    /// (after the throttle settled).
    static func drive(
        _ throttle: inout AdaptiveThrottle, offered: Int, capacity: Int, milliseconds: UInt64, start: UInt64 = 1
    ) -> (sent: Int, accepted: Int) {
        var sent = 0
        var accepted = 0
        for tick in start..<(start + milliseconds) {
            let now = tick * millisecond
            var takenThisTick = 0
            for _ in 0..<offered where throttle.admit(now: now) {
                let accept = takenThisTick < capacity
                if accept { takenThisTick += 1 }
                throttle.record(accepted: accept, now: now)
                if tick >= start + milliseconds / 2 {
                    sent += 1
                    if accept { accepted += 1 }
                }
            }
        }
        return (sent, accepted)
    }

    @Test func whileTheBrokerAcceptsEverythingNothingIsRefused() throws {
        var throttle = try Self.throttle(multiplier: 1.1)
        let (sent, accepted) = Self.drive(&throttle, offered: 20, capacity: 20, milliseconds: 2000)
        #expect(sent == 20_000)
        #expect(accepted == sent)
        #expect(throttle.refused == 0)
        let probability = throttle.refusalProbability(now: 2001 * Self.millisecond)
        #expect(probability == 0)
    }

    @Test(arguments: [1.1, 1.5, 2.0])
    func anOverloadedClientSendsAboutKTimesWhatTheBrokerAccepts(multiplier: Double) throws {
        var throttle = try Self.throttle(multiplier: multiplier)
        // Offered four times what the broker takes.
        let (sent, accepted) = Self.drive(&throttle, offered: 40, capacity: 10, milliseconds: 4000)
        let ratio = Double(sent) / Double(accepted)
        #expect(abs(ratio - multiplier) < 0.05 * multiplier, "sent \(sent), accepted \(accepted)")
        // The broker still gets at least what it can take.
        #expect(accepted >= 10 * 2000 * 95 / 100)
        #expect(throttle.refused > 0)
    }

    @Test func requestsInFlightAreNotCountedAsRefused() throws {
        var throttle = try Self.throttle(multiplier: 1.1)
        // A burst with no answers yet: nothing is known, nothing refused.
        var admitted = 0
        for _ in 0..<1000 where throttle.admit(now: Self.millisecond) { admitted += 1 }
        #expect(admitted == 1000)
        let probability = throttle.refusalProbability(now: Self.millisecond)
        #expect(probability == 0)
    }

    @Test func theThrottleForgetsAnOverloadAfterItsWindow() throws {
        var throttle = try Self.throttle(multiplier: 1.1, window: .seconds(1))
        _ = Self.drive(&throttle, offered: 40, capacity: 10, milliseconds: 1000)
        let during = throttle.refusalProbability(now: 1000 * Self.millisecond)
        #expect(during > 0.5)
        // One window later, with nothing in between, the overload is forgotten.
        let after = throttle.refusalProbability(now: 2100 * Self.millisecond)
        #expect(after == 0)
        let admitted = throttle.admit(now: 2100 * Self.millisecond)
        #expect(admitted)
    }

    @Test func refusalsFollowTheFormula() throws {
        var throttle = try Self.throttle(multiplier: 2)
        let now = Self.millisecond
        for _ in 0..<30 { throttle.record(accepted: false, now: now) }
        for _ in 0..<10 { throttle.record(accepted: true, now: now) }
        // (40 − 2 × 10) / (40 + 1)
        let probability = throttle.refusalProbability(now: now)
        #expect(abs(probability - 20.0 / 41.0) < 1e-12)
        // The credit refuses exactly the expected share of a run of calls: about 20/41 of the first 10.
        var refused = 0
        for _ in 0..<10 where !throttle.admit(now: now) { refused += 1 }
        #expect((4...5).contains(refused))
    }

    /// Any mix of sends, accepts, refusals and time: the probability stays in 0..<1, it is 0 once no refusal (the
    /// broker's or the throttle's own) is left in the window, and the throttle counts exactly the requests it refused.
    @Test func theProbabilityIsZeroWithoutRecentRefusalsWhateverHappens() async {
        await propertyCheck(count: 300, input: Gen.int(in: 0...9_999).array(of: 1...400)) { steps in
            var throttle = AdaptiveThrottle(configuration: try! .init(multiplier: 1.5, window: .seconds(1)))
            var now: UInt64 = Self.millisecond
            var inFlight = 0
            var refusedHere = 0
            var lastRefusal: UInt64?
            for step in steps {
                now += UInt64(step % 50) * Self.millisecond * UInt64(step % 7 == 0 ? 20 : 1)
                switch step % 3 {
                case 0:
                    if throttle.admit(now: now) {
                        inFlight += 1
                    } else {
                        refusedHere += 1
                        lastRefusal = now
                    }
                case 1 where inFlight > 0:
                    inFlight -= 1
                    throttle.record(accepted: true, now: now)
                case 2 where inFlight > 0:
                    inFlight -= 1
                    throttle.record(accepted: false, now: now)
                    lastRefusal = now
                default:
                    break
                }
                let probability = throttle.refusalProbability(now: now)
                #expect(probability >= 0 && probability < 1)
                if let lastRefusal, now - lastRefusal <= 1_100 * Self.millisecond { continue }
                #expect(probability == 0, "no refusal in the last window")
            }
            #expect(throttle.refused == refusedHere)
        }
    }

    @Test func badConfigurationsAreRejected() {
        #expect(throws: AdaptiveThrottle.ConfigurationError.self) {
            try AdaptiveThrottle.Configuration(multiplier: 0.9)
        }
        #expect(throws: AdaptiveThrottle.ConfigurationError.self) {
            try AdaptiveThrottle.Configuration(multiplier: .nan)
        }
        #expect(throws: AdaptiveThrottle.ConfigurationError.self) {
            try AdaptiveThrottle.Configuration(multiplier: 2, window: .milliseconds(10))
        }
        #expect(throws: Never.self) { try AdaptiveThrottle.Configuration(multiplier: 1, window: .seconds(600)) }
    }
}
