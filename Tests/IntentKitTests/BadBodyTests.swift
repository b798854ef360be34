import ConciergeExamples
import ConciergeJSON
import IntentKit
import Testing

@Suite("Bad bodies and unknown intents")
struct BadBodyTests {
    @Test(
        "malformed bodies are bad-body errors",
        arguments: [
            ("{", "not valid JSON"),
            ("", "not valid JSON"),
            ("[]", "must be a JSON object"),
            (#"{"resolve":{}}"#, "no \"intent\""),
            (#"{"intent":"Echo"}"#, "\"intent\" must be an object"),
            (#"{"intent":{"parameters":{}}}"#, "no string \"type\""),
            (#"{"intent":{"type":"Echo","parameters":[]}}"#, "\"parameters\" must be an object"),
            (#"{"intent":{"type":"Echo","identifier":5}}"#, "\"identifier\" must be a string"),
            (#"{"intent":{"type":"Echo","params":{}}}"#, "unknown key \"params\""),
        ]
    )
    func malformedBodies(text: String, fragment: String) async throws {
        for phase in IntentPhase.allCases {
            let job = try await runJob("Echo", phase, text)
            #expect(job.outcome == .error)
            #expect(job.json["code"] == "bad-body")
            let message = try #require(job.json["message"]?.stringValue)
            #expect(message.contains(fragment), "\(message)")
        }
    }

    @Test(
        "values of the wrong type are bad-body errors naming the parameter",
        arguments: [
            ("SendMessage", #"{"recipient":"Anna"}"#, ["recipient", "expected person object, got string"]),
            ("SendMessage", #"{"recipient":{"displayName":3}}"#, ["recipient", "displayName", "expected string"]),
            ("SendMessage", #"{"attachments":["a",2]}"#, ["attachments", "[1]"]),
            ("SendMessage", #"{"colour":"red"}"#, ["unknown parameter", "colour"]),
            ("RequestRide", #"{"partySize":"two"}"#, ["partySize", "expected integer, got string"]),
            ("RequestRide", #"{"partySize":2.5}"#, ["partySize", "expected integer, got number"]),
            ("RequestRide", #"{"dropOffLocation":{"lat":1}}"#, ["dropOffLocation", "unknown key \"lat\""]),
            ("RequestRide", #"{"scheduledPickupTime":{"hour":"ten"}}"#, ["scheduledPickupTime", "hour"]),
            ("StartWorkout", #"{"workoutLocationType":"underwater"}"#, ["workoutLocationType", "underwater"]),
            ("StartWorkout", #"{"isOpenEnded":"yes"}"#, ["isOpenEnded", "expected boolean"]),
            ("SendPayment", #"{"currencyAmount":{"amount":12.5,"currencyCode":"EUR"}}"#, ["currencyAmount", "amount"]),
            ("Echo", #"{"delayPhase":"later"}"#, ["delayPhase", "later"]),
        ]
    )
    func typeMismatches(example: (String, String, [String])) async throws {
        let (intentType, parameters, fragments) = example
        let job = try await runJob(intentType, .resolve, body(intentType, parameters))
        #expect(job.outcome == .error)
        #expect(job.json["code"] == "bad-body")
        let message = try #require(job.json["message"]?.stringValue)
        for fragment in fragments {
            #expect(message.contains(fragment), "\(message) lacks \(fragment)")
        }
    }

    @Test func intentTypeMismatchWithTheJobFrameIsABadBody() async throws {
        let job = try await runJob("SendMessage", .handle, body("Echo", #"{"text":"hi"}"#))
        #expect(job.outcome == .error)
        #expect(job.json["code"] == "bad-body")
        #expect(job.json["message"] == #"intent type "Echo" does not match the job's intent type "SendMessage""#)
    }

    @Test func nullParametersAreMissingNotErrors() async throws {
        let job = try await runJob("SendMessage", .resolve, body("SendMessage", #"{"recipient":null,"content":"Hi"}"#))
        #expect(job.outcome == .stop)
        #expect(job.kind("recipient") == "needsValue")
    }

    @Test func unknownIntentTypeIsAnUnknownIntentError() async throws {
        for phase in IntentPhase.allCases {
            let job = try await runJob("OrderPizza", phase, body("OrderPizza", "{}"))
            #expect(job.outcome == .error)
            #expect(job.json["code"] == "unknown-intent")
            #expect(job.json["message"]?.stringValue?.contains("OrderPizza") == true)
        }
    }

    @Test func typedIntentDecodingThrowsIntentErrorNamingTheParameter() {
        #expect {
            _ = try SendPaymentIntent(jsonValue: ["type": "SendPayment", "parameters": ["note": 5]])
        } throws: { error in
            let error = error as? IntentError
            return error?.code == .badBody && error?.parameter == "note"
        }
    }
}
