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
        for phase in [IntentPhase.resolve, .confirm, .handle] {
            let job = try await runJob("Echo", phase, text)
            #expect(job.outcome == .error)
            #expect(job.json["code"] == "bad-body")
            let message = try #require(job.json["message"]?.stringValue)
            #expect(message.contains(fragment), "\(message)")
        }
    }

    @Test(
        "parameters that break the definition get a stable code naming the intent and the parameter",
        arguments: [
            (
                "SendMessage", #"{"recipient":"Anna"}"#, "invalid-type", "recipient",
                ["expected person object, got string"]
            ),
            (
                "SendMessage", #"{"recipient":{"displayName":3}}"#, "invalid-type", "recipient",
                ["displayName", "string"]
            ),
            ("SendMessage", #"{"attachments":["a",2]}"#, "invalid-type", "attachments", ["[1]"]),
            ("SendMessage", #"{"colour":"red"}"#, "unknown-parameter", "colour", ["no parameter", "colour"]),
            ("RequestRide", #"{"partySize":"two"}"#, "invalid-type", "partySize", ["expected integer, got string"]),
            ("RequestRide", #"{"partySize":2.5}"#, "invalid-type", "partySize", ["expected integer, got number"]),
            ("RequestRide", #"{"partySize":21}"#, "out-of-range", "partySize", ["21", "maximum 20"]),
            ("RequestRide", #"{"partySize":0}"#, "out-of-range", "partySize", ["minimum 1"]),
            (
                "RequestRide", #"{"dropOffLocation":{"lat":1}}"#, "invalid-type", "dropOffLocation",
                ["unknown key \"lat\""]
            ),
            (
                "RequestRide", #"{"scheduledPickupTime":{"hour":"ten"}}"#, "invalid-type", "scheduledPickupTime",
                ["hour"]
            ),
            (
                "StartWorkout", #"{"workoutLocationType":"underwater"}"#, "invalid-enum", "workoutLocationType",
                ["underwater"]
            ),
            ("StartWorkout", #"{"isOpenEnded":"yes"}"#, "invalid-type", "isOpenEnded", ["expected boolean"]),
            (
                "SendPayment", #"{"currencyAmount":{"amount":12.5,"currencyCode":"EUR"}}"#, "invalid-type",
                "currencyAmount", ["amount"]
            ),
            ("Echo", #"{"delayPhase":"later"}"#, "invalid-enum", "delayPhase", ["later", "resolve, confirm, handle"]),
            ("Echo", #"{"delayPhase":7}"#, "invalid-type", "delayPhase", ["expected EchoPhase"]),
            ("Echo", #"{"delayMs":600001}"#, "out-of-range", "delayMs", ["600001", "maximum 600000"]),
            ("Echo", #"{"cpuMs":-1}"#, "out-of-range", "cpuMs", ["-1", "minimum 0"]),
        ]
    )
    func definitionViolations(example: (String, String, String, String, [String])) async throws {
        let (intentType, parameters, code, parameter, fragments) = example
        for phase in [IntentPhase.resolve, .confirm, .handle] {
            let job = try await runJob(intentType, phase, body(intentType, parameters))
            #expect(job.outcome == .error)
            #expect(job.json["code"] == .string(code))
            #expect(job.json["intent"] == .string(intentType))
            #expect(job.json["parameter"] == .string(parameter))
            let message = try #require(job.json["message"]?.stringValue)
            #expect(message.contains("\(intentType)"), "\(message) names the intent")
            for fragment in fragments {
                #expect(message.contains(fragment), "\(message) lacks \(fragment)")
            }
        }
    }

    @Test func valuesOnTheBoundsAndMissingRequiredParametersAreNotErrors() async throws {
        let ride = try await runJob("RequestRide", .resolve, body("RequestRide", #"{"partySize":20}"#))
        #expect(ride.outcome == .stop)
        #expect(ride.resolution("partySize") == ["kind": "unsupported", "reason": "partySizeOutOfRange"])
        let echo = try await runJob("Echo", .handle, body("Echo", #"{"delayMs":0,"cpuMs":0,"text":"x"}"#))
        #expect(echo.json["handle"]?["code"] == "success")
        // A missing required parameter is the handler's needsValue, not a validation error.
        let message = try await runJob("SendMessage", .resolve, body("SendMessage", #"{"content":"Hi"}"#))
        #expect(message.kind("recipient") == "needsValue")
    }

    @Test func phaseResultsInTheBodyMustBeObjects() async throws {
        let input = #"{"intent":{"type":"Echo","parameters":{}},"resolve":[1]}"#
        let job = try await runJob("Echo", .confirm, input)
        #expect(job.outcome == .error)
        #expect(job.json["code"] == "bad-body")
        #expect(job.json["message"]?.stringValue?.contains(#""resolve" must be an object"#) == true)
    }

    @Test func intentTypeMismatchWithTheJobFrameIsABadBody() async throws {
        let job = try await runJob("SendMessage", .handle, body("Echo", #"{"text":"hi"}"#))
        #expect(job.outcome == .error)
        #expect(job.json["code"] == "bad-body")
        #expect(job.json["message"] == #"intent type "Echo" does not match the job's intent type "SendMessage""#)
    }

    @Test func aLifecycleJobIsMalformed() async throws {
        let job = try await runJob("Echo", .lifecycle, body("Echo", #"{"text":"hi"}"#))
        #expect(job.outcome == .error)
        #expect(job.json["code"] == .string(IntentError.Code.malformed.rawValue))
    }

    @Test func nullParametersAreMissingNotErrors() async throws {
        let job = try await runJob("SendMessage", .resolve, body("SendMessage", #"{"recipient":null,"content":"Hi"}"#))
        #expect(job.outcome == .stop)
        #expect(job.kind("recipient") == "needsValue")
    }

    @Test func unknownIntentTypeIsAnUnknownIntentError() async throws {
        for phase in [IntentPhase.resolve, .confirm, .handle] {
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
            return error?.code == .invalidType && error?.parameter == "note" && error?.intent == "SendPayment"
        }
    }
}
