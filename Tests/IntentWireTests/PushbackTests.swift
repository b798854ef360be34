import ConciergeJSON
import IntentWire
import Testing

@Suite struct PushbackTests {
    static let millisecond: UInt64 = 1_000_000

    /// `admit` outside `#expect` (the macro cannot call a mutating method).
    static func admit(_ pushback: inout Pushback, now: UInt64) -> Bool { pushback.admit(now: now) }

    @Test func theBusyBodyCarriesTheHintAndStaysAnErrorBody() throws {
        let body = WireBody.busy("the queue is \"full\"", pushbackRate: 1_234, milliseconds: 1000)
        let json = try JSONValue.parse(body)
        #expect(json["code"] == "busy")
        #expect(json["message"] == "the queue is \"full\"")
        #expect(json["pushback_rate"] == 1234)
        #expect(json["pushback_ms"] == 1000)
        #expect(Pushback.Hint(errorBody: body) == Pushback.Hint(rate: 1234, milliseconds: 1000))
    }

    @Test func bodiesWithoutAWholeHintHaveNone() {
        let bodies = [
            WireBody.error(.busy, "no worker could start the request"),
            Array(#"{"code":"busy","message":"m","pushback_rate":50}"#.utf8),
            Array(#"{"code":"busy","message":"m","pushback_rate":0,"pushback_ms":1000}"#.utf8),
            Array(#"{"code":"busy","message":"m","pushback_rate":"fast","pushback_ms":1000}"#.utf8),
            Array(#"{"code":"busy","message":"m","pushback_rate":12,"pushback_ms":-1}"#.utf8),
            Array(#"{"code":"busy","message":"m","pushback_rate":"#.utf8),
            [],
        ]
        for body in bodies {
            #expect(Pushback.Hint(errorBody: body) == nil, "\(String(decoding: body, as: UTF8.self))")
        }
        // Members in another order, with other members around them, are read as well.
        let reordered = Array(#"{"pushback_ms":250,"code":"busy","pushback_rate":7,"message":"m"}"#.utf8)
        #expect(Pushback.Hint(errorBody: reordered) == Pushback.Hint(rate: 7, milliseconds: 250))
    }

    @Test func withoutAHintEverythingIsSent() {
        var pushback = Pushback()
        var admitted = 0
        for tick in 0..<10_000 where pushback.admit(now: UInt64(tick) * 1000) { admitted += 1 }
        #expect(admitted == 10_000)
        #expect(pushback.refused == 0)
    }

    /// Offered 20 requests per millisecond (20,000/s) while a hint of 1,000/s holds for a second: about 1,000 go out
    /// (the first burst of 10 included), the rest are refused here; once the hint's time is up, everything goes again.
    @Test func aHintHoldsTheRateForItsTimeAndThenLapses() {
        var pushback = Pushback()
        let start: UInt64 = 5_000 * Self.millisecond
        pushback.heed(.init(rate: 1000, milliseconds: 1000), now: start)
        var sent = 0
        var offered = 0
        for tick in 0..<1000 {
            let now = start + UInt64(tick) * Self.millisecond
            for _ in 0..<20 {
                offered += 1
                if pushback.admit(now: now) { sent += 1 }
            }
        }
        #expect(sent >= 1000 && sent <= 1010, "\(sent)")
        #expect(pushback.refused == offered - sent)
        let after = start + 1000 * Self.millisecond
        #expect(!pushback.isActive(now: after))
        var admittedAfter = 0
        for _ in 0..<100 where pushback.admit(now: after) { admittedAfter += 1 }
        #expect(admittedAfter == 100)
    }

    /// A hint heard while another holds changes the rate and extends the time; it does not refill the bucket, so a
    /// stream of refusals (each with its hint) cannot let a burst through.
    @Test func aNewHintChangesTheRateWithoutRefillingTheBucket() {
        var pushback = Pushback()
        let start: UInt64 = 1_000 * Self.millisecond
        pushback.heed(.init(rate: 10_000, milliseconds: 1000), now: start)
        var burst = 0
        while burst <= 1000, pushback.admit(now: start) { burst += 1 }
        #expect(burst == 100)  // a hundredth of a second's worth
        pushback.heed(.init(rate: 100, milliseconds: 1000), now: start)
        #expect(!Self.admit(&pushback, now: start))
        // 100/s: one token every 10 ms.
        #expect(!Self.admit(&pushback, now: start + 9 * Self.millisecond))
        #expect(Self.admit(&pushback, now: start + 11 * Self.millisecond))
        // Extended: still held 1.5 s after the first hint, since the second was heard later.
        pushback.heed(.init(rate: 100, milliseconds: 1000), now: start + 900 * Self.millisecond)
        #expect(pushback.isActive(now: start + 1500 * Self.millisecond))
        #expect(pushback.rate == 100)
    }

    /// A hint for longer than a minute (a 9-digit `pushback_ms` is about 11 days) is heeded for a minute.
    @Test func aHintIsHeededForAMinuteAtMost() throws {
        let body = Array(#"{"code":"busy","message":"m","pushback_rate":1,"pushback_ms":999999999}"#.utf8)
        let hint = try #require(Pushback.Hint(errorBody: body))
        var pushback = Pushback()
        let start: UInt64 = 1_000 * Self.millisecond
        pushback.heed(hint, now: start)
        #expect(pushback.isActive(now: start + 59_999 * Self.millisecond))
        #expect(!pushback.isActive(now: start + 60_000 * Self.millisecond))
        #expect(Self.admit(&pushback, now: start + 60_000 * Self.millisecond))
    }
}
