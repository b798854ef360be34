import IntentLoad
import Testing

/// The open-loop arrival schedule and the duration syntax of the command line.
struct LoadScheduleTests {
    let start: UInt64 = 7_000_000_123

    @Test func firstRequestIsDueAtTheStart() {
        let schedule = LoadSchedule(start: start, rate: 400)
        #expect(schedule.intendedTime(of: 0) == start)
        #expect(schedule.dueCount(at: start) == 1)
    }

    @Test func nothingIsDueBeforeTheStart() {
        let schedule = LoadSchedule(start: start, rate: 400)
        #expect(schedule.dueCount(at: start - 1) == 0)
        #expect(schedule.dueCount(at: 0) == 0)
    }

    @Test(arguments: [400.0, 3.0, 7.0, 1000.0, 12_345.0, 0.5])
    func intendedTimesAreComputedFromTheStartWithoutDrift(rate: Double) {
        let schedule = LoadSchedule(start: start, rate: rate)
        for index in [1, 2, 3, 10, 999, 1000, 1001, 123_457, 1_000_000] {
            // start + index / rate seconds, exactly (in integer nanoseconds, up to the rounding of one step).
            let exact = Double(index) * 1e9 / rate
            let intended = Double(schedule.intendedTime(of: index) - start)
            #expect(abs(intended - exact) <= 1, "request \(index) at \(rate)/s: \(intended) ns, exact \(exact) ns")
        }
    }

    @Test func stepsBetweenRequestsNeverAccumulateRounding() {
        // 3 per second: one step is 333,333,333.33 ns; summing rounded steps would lose 1/3 ns per request.
        let schedule = LoadSchedule(start: start, rate: 3)
        var previous = schedule.intendedTime(of: 0)
        for index in 1...30_000 {
            let time = schedule.intendedTime(of: index)
            #expect((333_333_333...333_333_334).contains(time - previous))
            previous = time
        }
        // 30,000 requests at 3/s: 10,000 s after the start, not 30,000 rounded steps (which would be 10 µs early).
        let last = Double(schedule.intendedTime(of: 30_000) - start)
        #expect(abs(last - 10_000_000_000_000) <= 1)
    }

    @Test func dueCountStepsExactlyAtEachInterval() {
        // 400 per second: one request every 2.5 ms, exactly representable.
        let schedule = LoadSchedule(start: start, rate: 400)
        #expect(schedule.dueCount(at: start + 2_499_999) == 1)
        #expect(schedule.dueCount(at: start + 2_500_000) == 2)
        #expect(schedule.dueCount(at: start + 1_000_000_000) == 401)
        #expect(schedule.dueCount(at: start + 2_000_000_000 - 1) == 800)
    }

    @Test func dueCountAgreesWithIntendedTimesAroundEachOne() {
        for rate in [3.0, 7.0, 400.0, 9_999.0] {
            let schedule = LoadSchedule(start: start, rate: rate)
            for index in 1..<5_000 {
                let time = schedule.intendedTime(of: index)
                // Just before a request's intended time only the earlier ones are due; just after, it is too.
                #expect(schedule.dueCount(at: time - 1) == index, "rate \(rate), request \(index)")
                #expect(schedule.dueCount(at: time + 1) == index + 1, "rate \(rate), request \(index)")
            }
        }
    }

    /// A request is due at its own intended time (`dueCount(at: intendedTime(of: i)) >= i + 1`). With a rate whose
    /// interval is not a whole number of nanoseconds, `intendedTime` rounds down and `dueCount` divides the rounded
    /// time again, so request i is counted due only one nanosecond later.
    @Test func requestIsDueAtItsOwnIntendedTime() {
        do {
            let schedule = LoadSchedule(start: start, rate: 3)
            var wrong = 0
            for index in 0..<3_000 where schedule.dueCount(at: schedule.intendedTime(of: index)) < index + 1 {
                wrong += 1
            }
            #expect(wrong == 0)
        }
    }

    @Test func openLoopTwoSecondsAt400IsEightHundredIntendedRequests() {
        let schedule = LoadSchedule(start: start, rate: 400)
        let end = start + 2_000_000_000
        let inWindow = (0..<10_000).filter { schedule.intendedTime(of: $0) < end }.count
        #expect(inWindow == 800)
        #expect(schedule.dueCount(at: end - 1) == 800)
    }
}

struct LoadDurationTests {
    @Test(arguments: [
        ("10s", Duration.seconds(10)),
        ("500ms", .milliseconds(500)),
        ("250us", .microseconds(250)),
        ("250µs", .microseconds(250)),
        ("100ns", .nanoseconds(100)),
        ("2m", .seconds(120)),
        ("1h", .seconds(3600)),
        ("1.5s", .milliseconds(1500)),
        ("0.25ms", .microseconds(250)),
        ("3", .seconds(3)),
        ("0.5", .milliseconds(500)),
        ("0s", .zero),
        ("  5ms ", .milliseconds(5)),
    ])
    func parsesNumbersWithUnits(text: String, expected: Duration) {
        #expect(LoadDuration.parse(text) == expected)
    }

    @Test(arguments: [
        "", " ", "s", "ms", "abc", "10x", "10 s", "1.2.3s", "five seconds", "10sec", "ms10", "1s2",
    ])
    func rejectsWhatIsNotADuration(text: String) {
        #expect(LoadDuration.parse(text) == nil)
    }

    @Test(arguments: ["-1s", "-5", "-0.5ms", "-2m", "inf", "infs", "nan", "nanms"])
    func rejectsNegativeAndNonFiniteValues(text: String) {
        #expect(LoadDuration.parse(text) == nil)
    }

    /// `Int64(value * unit.nanoseconds)` traps when the product does not fit in Int64 (about 292 years), so
    /// `concierge load --duration 1e12s` crashes instead of reporting a bad value.
    @Test func durationTooLongForNanosecondsIsRejectedWithoutCrashing() async {
        do {
            await #expect(processExitsWith: .success) {
                precondition(LoadDuration.parse("1e12s") == nil)
                precondition(LoadDuration.parse("1e300") == nil)
                precondition(LoadDuration.parse("99999999999h") == nil)
            }
        }
    }

    @Test func largestRepresentableDurationsStillParse() {
        // 100 years in seconds still fits in Int64 nanoseconds.
        #expect(LoadDuration.parse("3153600000s") == .seconds(3_153_600_000))
    }
}
