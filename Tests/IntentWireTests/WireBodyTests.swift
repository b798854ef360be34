import ConciergeJSON
import IntentWire
import Testing

@Suite struct WireBodyTests {
    func decimal(_ text: String) -> Int? { Array(text.utf8).withUnsafeBytes { WireBody.parseDecimal($0) } }

    @Test func decimalFramesAreOneToNineDigits() {
        #expect(decimal("0") == 0)
        #expect(decimal("0042") == 42)
        #expect(decimal("999999999") == 999_999_999)
        for text in ["", "1234567890", "-1", "+1", " 1", "1 ", "1.0", "1e3", "x", "١"] {
            #expect(decimal(text) == nil, "\(text)")
        }
    }

    @Test func errorBodiesEscapeTheirText() {
        let body = WireBody.error(.malformed, "a \"quoted\"\\ line\nand\u{1}")
        #expect(
            String(decoding: body, as: UTF8.self)
                == #"{"code":"malformed","message":"a \"quoted\"\\ line\nand\u0001"}"#
        )
    }

    @Test func errorBodiesEscapeControlCharactersAsTheJSONSerializerDoes() throws {
        let message = "back\u{8}space, form\u{C}feed, bell\u{7}, tab\t, nul\u{0}, \"é\""
        let body = WireBody.error(.badBody, message)
        #expect(
            String(decoding: body, as: UTF8.self)
                == #"{"code":"bad-body","message":"back\bspace, form\ffeed, bell\u0007, tab\t, nul\u0000, \"é\""}"#
        )
        let serialized = JSONValue.object(["code": .string("bad-body"), "message": .string(message)]).serialized()
        #expect(body == serialized)
        #expect(try JSONValue.parse(body)["message"]?.stringValue == message)
    }

    @Test func progressBodiesNameTheWorkerOnlyWhenRunning() {
        let running = WireBody.progress(state: "running", phase: .handle, elapsedMilliseconds: 500, worker: "w-1")
        #expect(
            String(decoding: running, as: UTF8.self)
                == #"{"elapsed_ms":500,"phase":"handle","state":"running","worker":"w-1"}"#
        )
        let queued = WireBody.progress(state: "queued", phase: .confirm, elapsedMilliseconds: 3001, worker: nil)
        #expect(String(decoding: queued, as: UTF8.self) == #"{"elapsed_ms":3001,"phase":"confirm","state":"queued"}"#)
    }
}
