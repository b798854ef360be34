import IntentWire
import Testing

/// W3C trace context as CIP carries it (`Schemas/PROTOCOL.md` section 4.2): what is accepted, what is
/// `bad-trace-context`, and the accessors.
@Suite struct TraceContextTests {
    static let parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

    @Test func aVersion00TraceparentGivesItsParts() throws {
        let context = try TraceContext(traceparent: Self.parent, tracestate: "congo=t61rcWkgMzE")
        #expect(context.version == "00")
        #expect(context.traceID == "4bf92f3577b34da6a3ce929d0e0e4736")
        #expect(context.parentSpanID == "00f067aa0ba902b7")
        #expect(context.traceFlags == 1)
        #expect(context.isSampled)
        #expect(context.tracestate == "congo=t61rcWkgMzE")
        let unsampled = try TraceContext(
            traceID: "4bf92f3577b34da6a3ce929d0e0e4736", spanID: "00f067aa0ba902b7", sampled: false)
        #expect(unsampled.traceparent == "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00")
        #expect(!unsampled.isSampled)
        #expect(
            try TraceContext(traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-fe").traceFlags == 0xFE)
    }

    @Test func laterVersionsAreAcceptedByTheirFirst55Bytes() {
        let later = "cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
        #expect(TraceContext.isValidTraceparent(Array(later.utf8)))
        #expect(TraceContext.isValidTraceparent(Array((later + "-what-comes-next").utf8)))
        #expect(!TraceContext.isValidTraceparent(Array((later + "x").utf8)))
        // What follows is text: bytes outside printable ASCII are refused (found by fuzzing: they cannot round-trip
        // through the String the value is kept in).
        #expect(!TraceContext.isValidTraceparent(Array((later + "-").utf8) + [0x8E, 0xFF]))
        #expect(!TraceContext.isValidTraceparent(Array((later + "- x").utf8)))
        // Version 00 is exactly 55 bytes.
        #expect(!TraceContext.isValidTraceparent(Array((Self.parent + "-x").utf8)))
    }

    @Test func everyRuleOfTheTraceparentRefusesWhatBreaksIt() {
        let bad = [
            "",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0",  // 54 bytes
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",  // version ff
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",  // uppercase
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",  // zero trace id
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",  // zero parent id
            "00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",  // a wrong separator
            "00-4bf92f3577b34da6a3ce929d0e0e473g-00f067aa0ba902b7-01",  // not hex
            "0x-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-" + String(repeating: "a", count: 500),
        ]
        for traceparent in bad {
            #expect(throws: TraceContextError.self, "\(traceparent)") {
                try TraceContext(traceparent: traceparent)
            }
            #expect(!TraceContext.isValidTraceparent(Array(traceparent.utf8)))
        }
    }

    @Test func theTracestateIsPrintableAsciiOfAtMost512Bytes() throws {
        _ = try TraceContext(traceparent: Self.parent, tracestate: String(repeating: "a", count: 512))
        for tracestate in [String(repeating: "a", count: 513), "a=b\u{7F}", "a=\tb", "a=é"] {
            #expect(throws: TraceContextError.self) {
                try TraceContext(traceparent: Self.parent, tracestate: tracestate)
            }
        }
    }

    @Test func framesMayBothBeEmptyButATracestateNeedsATraceparent() throws {
        #expect(try TraceContext(traceparentFrame: [UInt8](), tracestateFrame: [UInt8]()) == nil)
        let error = #expect(throws: TraceContextError.self) {
            try TraceContext(traceparentFrame: [UInt8](), tracestateFrame: bytes("a=b"))
        }
        #expect(error?.code == .badTraceContext)
        #expect(
            try TraceContext(traceparentFrame: bytes(Self.parent), tracestateFrame: bytes("a=b"))
                == TraceContext(traceparent: Self.parent, tracestate: "a=b"))
    }

    // MARK: On the wire

    @Test func aCIPC04RequestOrTurnWithABadTraceContextIsRefusedAtCheck4() {
        let body = #"{"intent":{"type":"Echo"}}"#
        func request(_ traceparent: String, _ tracestate: String) -> [[UInt8]] {
            frames("CIPC04", "REQUEST", "r-1", "Echo", "handle", "", body, "", traceparent, tracestate)
        }
        func turn(_ traceparent: String, _ tracestate: String) -> [[UInt8]] {
            frames("CIPC04", "TURN", "t-1", "c-1", "1", "", body, "", traceparent, tracestate)
        }
        for make in [request, turn] {
            #expect(ClientMessageDecoder().error(make("", "")) == nil)
            #expect(ClientMessageDecoder().error(make(Self.parent, "a=b")) == nil)
            for (traceparent, tracestate) in [("x", ""), ("", "a=b"), (Self.parent, "a=\u{1}")] {
                let error = ClientMessageDecoder().error(make(traceparent, tracestate))
                #expect(error?.code == .badTraceContext)
                #expect(error?.check == 4)
                #expect(error?.requestID == make("", "")[2])
            }
        }
        // A CIPC04 REQUEST of 8 frames (a CIPC02 shape) and a TURN of 8 frames are malformed.
        #expect(
            ClientMessageDecoder().error(frames("CIPC04", "REQUEST", "r-1", "Echo", "handle", "", body, ""))?.code
                == .malformed)
        #expect(
            ClientMessageDecoder().error(frames("CIPC04", "TURN", "t-1", "c-1", "1", "", body, ""))?.code
                == .malformed)
        // CIPC03 keeps its 8 frames: a trace context there is two frames too many.
        #expect(
            ClientMessageDecoder().error(
                frames("CIPC03", "REQUEST", "r-1", "Echo", "handle", "", body, "", Self.parent, ""))?.code
                == .malformed)
    }

    @Test func aCIPW05JobWithABadTraceContextIsRefusedAtW3() {
        let jobID: [UInt8] = [1, 2, 3, 4, 5, 6, 7, 8]
        func job(_ traceparent: String, _ tracestate: String) -> [[UInt8]] {
            [bytes("CIPW05"), bytes("JOB"), jobID] + frames("Echo", "handle", "100", "{}", "", "1", "handle")
                + frames(traceparent, tracestate)
        }
        #expect(BrokerMessageDecoder().error(job("", "")) == nil)
        #expect(BrokerMessageDecoder().error(job(Self.parent, "")) == nil)
        let error = BrokerMessageDecoder().error(job("00-bad", ""))
        #expect(error?.check == 3)
        #expect(error?.jobID == jobID)
        // A CIPW05 JOB without a trace context has the 10 frames of CIPW04 and decodes with none; 11 frames is
        // unusable.
        let untraced = Array(job("", "").dropLast(2))
        #expect(BrokerMessageDecoder().error(untraced) == nil)
        #expect(BrokerMessageDecoder().error(Array(job("", "").dropLast(1)))?.check == 3)
    }
}
