import Histogram
import IntentLoad
import Testing

/// Naming what a reply says.
struct LoadOutcomeTests {
    @Test func confirmAndHandleRepliesAreNamedByTheirCode() {
        #expect(
            finalOutcome("handle", #"{"intent": {"type": "Echo"}, "handle": {"code": "success", "data": {}}}"#)
                == "final.handle.success"
        )
        #expect(
            finalOutcome(
                "confirm",
                #"{"intent": {}, "resolve": {}, "confirm": {"code": "failureRequiringAppLaunch", "userActivity": {}}}"#
            ) == "final.confirm.failureRequiringAppLaunch"
        )
        #expect(
            finalOutcome("confirm", #"{"confirm": {"code": "failureInsufficientFunds"}}"#)
                == "final.confirm.failureInsufficientFunds"
        )
        // The reply's phase decides which output counts (a lifecycle that ran to the end answers in handle).
        #expect(
            finalOutcome(
                "handle", #"{"resolve": {}, "confirm": {"code": "ready"}, "handle": {"code": "continueInApp"}}"#)
                == "final.handle.continueInApp"
        )
    }

    @Test func resolveRepliesAreSuccessWhenEveryParameterNeedsNothing() {
        let body = """
            {"intent": {"type": "SendMessage"}, "resolve": {
              "recipient": {"kind": "success", "value": {"displayName": "Anna Schmidt"}},
              "content": {"kind": "success", "value": "Hi"},
              "attachments": {"kind": "notRequired"}}}
            """
        #expect(finalOutcome("resolve", body) == "final.resolve.success")
        #expect(finalOutcome("resolve", #"{"resolve": {}}"#) == "final.resolve.success")
    }

    @Test(arguments: ["disambiguation", "confirmationRequired", "needsValue", "unsupported"])
    func resolveRepliesAreNamedByTheKindThatNeedsTheUser(kind: String) {
        let body = """
            {"intent": {"type": "SendMessage"}, "resolve": {
              "recipient": {"kind": "\(kind)", "options": []},
              "content": {"kind": "success", "value": "Hi"},
              "attachments": {"kind": "notRequired"}}}
            """
        #expect(finalOutcome("resolve", body) == "final.resolve.\(kind)")
    }

    @Test func mostPressingResolutionKindWinsWhenSeveralNeedTheUser() {
        func body(_ kinds: [String]) -> String {
            let entries = kinds.enumerated().map { #""p\#($0.offset)": {"kind": "\#($0.element)"}"# }
            return #"{"resolve": {"# + entries.joined(separator: ", ") + "}}"
        }
        #expect(finalOutcome("resolve", body(["needsValue", "unsupported", "success"])) == "final.resolve.unsupported")
        #expect(
            finalOutcome("resolve", body(["needsValue", "disambiguation", "confirmationRequired"]))
                == "final.resolve.disambiguation"
        )
        #expect(
            finalOutcome("resolve", body(["needsValue", "confirmationRequired"]))
                == "final.resolve.confirmationRequired"
        )
        #expect(finalOutcome("resolve", body(["notRequired", "needsValue"])) == "final.resolve.needsValue")
    }

    @Test func finalReplyWithoutThePhasesCodeIsUnparsable() {
        // Well-formed JSON, but not the output of the reply's phase: no code can be named.
        #expect(finalOutcome("handle", #"{"intent": {"type": "Echo"}}"#) == "final.handle.unparsable")
        #expect(finalOutcome("confirm", #"{"confirm": {"data": {}}}"#) == "final.confirm.unparsable")
        #expect(finalOutcome("confirm", #"{"confirm": {"code": 3}}"#) == "final.confirm.unparsable")
        #expect(finalOutcome("handle", #"{"handle": null}"#) == "final.handle.unparsable")
        #expect(finalOutcome("resolve", #"{"intent": {}}"#) == "final.resolve.unparsable")
        #expect(finalOutcome("resolve", #"{"resolve": "success"}"#) == "final.resolve.unparsable")
    }

    // The body is scanned, not parsed: these check that the scan finds the right member whatever surrounds it.

    @Test func onlyTheTopLevelPhaseMemberAndItsOwnCodeCount() {
        let body = """
            {"intent": {"type": "Echo", "parameters": {"handle": {"code": "fromTheIntent"}, "code": "nested"}},
             "handle": {"data": {"code": "fromTheData", "list": [{"code": "x"}, 1, -2.5e3, true, null]},
                        "userActivity": {"activityType": "a.b"}, "code": "success"}}
            """
        #expect(finalOutcome("handle", body) == "final.handle.success")
        // The phase member may come first.
        #expect(
            finalOutcome("handle", #"{"handle":{"code":"failure"},"intent":{"type":"Echo"}}"#) == "final.handle.failure"
        )
    }

    @Test func stringsWithEscapesBracesAndQuotesAreSkippedWhole() {
        let body = #"""
            {"intent": {"parameters": {"text": "a \"}\" b { [ \\", "more": "\"handle\": {\"code\": \"fake\"}"}},
             "handle": {"code": "continueInApp"}}
            """#
        #expect(finalOutcome("handle", body) == "final.handle.continueInApp")
        #expect(
            errorOutcome(#"{"message": "the \"code\": \"wrong\" was bad", "code": "worker-lost"}"#)
                == "error.worker-lost"
        )
    }

    @Test func nestedKindInAResolvedValueDoesNotCount() {
        let body = """
            {"resolve": {"recipient": {"value": {"kind": "unsupported", "displayName": "Kind"}, "kind": "success"},
                         "content": {"kind": "notRequired"}}}
            """
        #expect(finalOutcome("resolve", body) == "final.resolve.success")
    }

    @Test func whitespaceAnywhereIsAllowed() {
        let body = "\n {\t\"intent\" :\r\n {} ,\n  \"confirm\"\t:  { \"code\" :\n\"ready\" } }\n"
        #expect(finalOutcome("confirm", body) == "final.confirm.ready")
    }

    @Test func malformedResolveOutputIsUnparsable() {
        #expect(
            finalOutcome("resolve", #"{"resolve": {"a": {"kind": "needsValue"} "b": {"kind": "success"}}}"#)
                == "final.resolve.unparsable"
        )
        #expect(finalOutcome("resolve", #"{"resolve": {"a": {"kind": "needsValue"},}}"#) == "final.resolve.unparsable")
    }

    /// `JSONScanner` says "any malformed input makes a lookup return nil", but a lookup stops at the member it
    /// wants and never looks at the rest, so a body that is broken after the code is still named by that code.
    @Test func bodyMalformedAfterTheCodeIsUnparsable() {
        do {
            #expect(finalOutcome("handle", #"{"handle": {"code": "success"}, "oops"}"#) == "final.handle.unparsable")
            #expect(finalOutcome("handle", #"{"handle": {"code": "success", ]]]"#) == "final.handle.unparsable")
            #expect(errorOutcome(#"{"code": "busy", "message": "#) == "error.unparsable")
        }
    }

    /// Escaped quotes and backslashes anywhere in a long string (every offset within and across 32-byte blocks) do
    /// not end it, and the member after it is still found; an unterminated one is unparsable.
    @Test func escapesAtEveryOffsetOfALongStringAreSkipped() {
        for offset in 0..<70 {
            for escape in [#"\""#, #"\\"#, #"\\\""#, #"\u0022"#] {
                let text = String(repeating: "x", count: offset) + escape + String(repeating: "y", count: 70 - offset)
                let body = #"{"handle": {"data": {"text": "\#(text)"}, "code": "success"}}"#
                #expect(finalOutcome("handle", body) == "final.handle.success", "offset \(offset), \(escape)")
                #expect(errorOutcome(#"{"message": "\#(text)", "code": "busy"}"#) == "error.busy")
            }
            let open = #"{"handle": {"code": "success", "data": "\#(String(repeating: "z", count: offset))\""#
            #expect(finalOutcome("handle", open) == "final.handle.unparsable", "offset \(offset)")
        }
    }

    @Test(arguments: ["", "garbage", "{\"handle\": ", "[1, 2", "\u{FF}"])
    func unparsableFinalBodyIsCountedAsUnparsable(body: String) {
        #expect(finalOutcome("handle", body) == "final.handle.unparsable")
    }

    @Test func errorRepliesAreNamedByTheirCode() {
        #expect(
            errorOutcome(#"{"code": "unknown-intent", "message": "no worker serves Nope"}"#) == "error.unknown-intent")
        #expect(errorOutcome(#"{"code": "handler-failed", "message": "boom"}"#) == "error.handler-failed")
        #expect(errorOutcome(#"{"code": "busy"}"#) == "error.busy")
    }

    @Test(arguments: ["", "garbage", "{}", "{\"message\": \"no code\"}", "{\"code\": 5}", "[\"busy\"]"])
    func errorReplyWithoutACodeIsUnparsable(body: String) {
        #expect(errorOutcome(body) == "error.unparsable")
    }

    @Test func keysOfTheOtherOutcomesAreStable() {
        #expect(LoadOutcome.progress == "progress")
        #expect(LoadOutcome.unanswered == "unanswered")
    }
}

/// Counting and timing replies.
struct LoadRecorderTests {
    let origin: UInt64 = 50_000_000_000
    let ms: UInt64 = 1_000_000

    @Test func countsEveryKindOfReplyAndTheTimelinePerInterval() throws {
        var recorder = LoadRecorder(origin: origin, interval: .milliseconds(100))
        // Interval 0: two requests, one answered in 5 ms, the other's first reply missed its deadline.
        recorder.recordSent(now: origin + 10 * ms)
        recorder.recordSent(now: origin + 20 * ms)
        recorder.recordFirstReply(latency: 5 * ms, missedDeadline: false)
        recorder.recordFinalReply(
            latency: 5 * ms, outcome: "final.handle.success", isError: false, now: origin + 15 * ms)
        recorder.recordFirstReply(latency: 60 * ms, missedDeadline: true)
        recorder.recordProgress()
        // Interval 1: one request, answered with an error.
        recorder.recordSent(now: origin + 150 * ms)
        recorder.recordFirstReply(latency: 30 * ms, missedDeadline: false)
        recorder.recordFinalReply(latency: 30 * ms, outcome: "error.busy", isError: true, now: origin + 180 * ms)
        // Interval 2: nothing. Interval 3: one more request; the second of interval 0 ends late.
        recorder.recordSent(now: origin + 350 * ms)
        recorder.recordFinalReply(
            latency: 345 * ms, outcome: "final.handle.success", isError: false, now: origin + 365 * ms)
        // The request of interval 3 never got an answer.
        recorder.recordUnanswered(1)
        recorder.recordUnanswered(0)
        recorder.finish(now: origin + 390 * ms)

        #expect(recorder.requests == 4)
        #expect(recorder.finalReplies == 2)
        #expect(recorder.errorReplies == 1)
        #expect(recorder.progressReplies == 1)
        #expect(recorder.deadlineMisses == 1)
        #expect(recorder.unanswered == 1)
        #expect(recorder.outcomes == ["final.handle.success": 2, "error.busy": 1, "progress": 1, "unanswered": 1])
        #expect(recorder.firstReply.totalCount == 3)
        #expect(recorder.finalReply.totalCount == 3)
        // Every request has exactly one ending: a final reply, an error reply, or none.
        #expect(recorder.requests == recorder.finalReplies + recorder.errorReplies + recorder.unanswered)

        let timeline = recorder.timeline
        try #require(timeline.count == 4)
        #expect(timeline.map(\.second) == [0, 1, 2, 3])
        #expect(timeline.map(\.sent) == [2, 1, 0, 1])
        #expect(timeline.map(\.completed) == [1, 1, 0, 1])
        #expect(timeline.map(\.errors) == [0, 1, 0, 0])
        #expect(timeline.map(\.deadlineMisses) == [1, 0, 0, 0])
        // Per-interval percentiles of the final replies that came in that interval (µs, 3 significant digits).
        #expect(isClose(timeline[0].finalP50Microseconds, 5_000))
        #expect(isClose(timeline[1].finalP99Microseconds, 30_000))
        #expect(timeline[2].finalP50Microseconds == 0 && timeline[2].finalP99Microseconds == 0)
        #expect(isClose(timeline[3].finalP99Microseconds, 345_000))
    }

    @Test func timelineIntervalFollowsTheChosenResolution() {
        var recorder = LoadRecorder(origin: origin, interval: .milliseconds(10))
        for step in 0..<50 {
            let now = origin + UInt64(step) * 2 * ms  // one request every 2 ms for 100 ms
            recorder.recordSent(now: now)
            recorder.recordFinalReply(latency: 1 * ms, outcome: "final.handle.success", isError: false, now: now)
        }
        recorder.finish(now: origin + 100 * ms - 1)
        #expect(recorder.timeline.count == 10)
        #expect(recorder.timeline.map(\.sent) == Array(repeating: 5, count: 10))
        #expect(recorder.timeline.map(\.completed).reduce(0, +) == 50)
    }

    @Test func finishClosesTheLastIntervalOnlyWhenSomethingHappenedInIt() {
        var recorder = LoadRecorder(origin: origin, interval: .milliseconds(100))
        recorder.recordSent(now: origin + 10 * ms)
        recorder.recordFinalReply(
            latency: 2 * ms, outcome: "final.handle.success", isError: false, now: origin + 12 * ms)
        // Finishing long after: the empty intervals in between are kept, the empty current one is not.
        recorder.finish(now: origin + 450 * ms)
        #expect(recorder.timeline.map(\.sent) == [1, 0, 0, 0])
        var empty = LoadRecorder(origin: origin)
        empty.finish(now: origin + 10 * ms)
        #expect(empty.timeline.isEmpty)
        #expect(empty.requests == 0 && empty.outcomes.isEmpty)
    }

    @Test func latenciesAreRecordedInMicrosecondsAndClampedIntoTheTrackableRange() {
        var recorder = LoadRecorder(origin: origin)
        recorder.recordFinalReply(latency: 1_234_000, outcome: "final.handle.success", isError: false, now: origin)
        recorder.recordFinalReply(latency: 0, outcome: "final.handle.success", isError: false, now: origin)
        recorder.recordFinalReply(latency: .max, outcome: "final.handle.success", isError: false, now: origin)
        #expect(recorder.finalReply.totalCount == 3)
        #expect(recorder.finalReply.min == 1)  // 0 ns becomes 1 µs
        #expect(isClose(recorder.finalReply.max, 3_600_000_000))  // at most one hour
        #expect(isClose(recorder.finalReply.valueAtPercentile(50), 1_234))
    }

    @Test func percentilesOfAnEmptyHistogramAreZero() {
        let recorder = LoadRecorder(origin: origin)
        #expect(
            LatencyPercentiles(recorder.finalReply)
                == LatencyPercentiles(p50: 0, p90: 0, p99: 0, p999: 0, max: 0, mean: 0, count: 0)
        )
    }

    @Test func percentilesAreOrderedAndCountEveryReply() {
        let recorder = makeRecorder(count: 1000, stepMicros: 10)
        let final = LatencyPercentiles(recorder.finalReply)
        #expect(final.count == 1000)
        #expect(final.p50 <= final.p90 && final.p90 <= final.p99 && final.p99 <= final.p999 && final.p999 <= final.max)
        #expect(isClose(final.p50, 5_000))
        #expect(isClose(final.p90, 9_000))
        #expect(isClose(final.p99, 9_900))
        #expect(isClose(final.max, 10_000))
        #expect(abs(final.mean - 5_005) < 10)
        let first = LatencyPercentiles(recorder.firstReply)
        #expect(first.count == 1000)
        #expect(first.p50 < final.p50)
    }
}

/// Whether a histogram value is within its 3-significant-digit resolution of `expected`.
func isClose(_ value: UInt64, _ expected: UInt64) -> Bool {
    let difference = value > expected ? value - expected : expected - value
    return difference <= max(expected / 500, 1)
}
