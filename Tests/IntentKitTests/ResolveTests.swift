import ConciergeExamples
import ConciergeJSON
import IntentKit
import Testing

/// Every resolution kind from the SiriKit seed examples, through `HandlerProvider.run` with real JSON bodies.
@Suite("Resolve")
struct ResolveTests {
    // MARK: RequestRide (seed 001 / 000: the drop-off location)

    @Test func dropOffInsideServiceAreaResolvesSuccessAndContinues() async throws {
        let job = try await runJob(
            "RequestRide", .resolve,
            body("RequestRide", #"{"dropOffLocation":{"name":"Home","latitude":37.78,"longitude":-122.41}}"#)
        )
        #expect(job.outcome == .continue)
        #expect(job.kind("dropOffLocation") == "success")
        #expect(job.resolution("dropOffLocation")?["value"]?["latitude"] == 37.78)
        for name in ["pickupLocation", "rideOptionName", "partySize", "scheduledPickupTime"] {
            #expect(job.kind(name) == "notRequired", "\(name)")
        }
    }

    @Test func dropOffByKnownNameIsResolvedWithCoordinatesWrittenBack() async throws {
        let job = try await runJob(
            "RequestRide", .resolve, body("RequestRide", #"{"dropOffLocation":{"name":"ferry building"}}"#)
        )
        #expect(job.kind("dropOffLocation") == "success")
        let written = try #require(job.parameter("dropOffLocation"))
        #expect(written["name"] == "Ferry Building")
        #expect(written["latitude"] == 37.7955)
        #expect(written["longitude"] == -122.3937)
        #expect(job.outcome == .continue)
    }

    @Test func dropOffOutsideServiceAreaIsUnsupportedWithReason() async throws {
        let job = try await runJob(
            "RequestRide", .resolve,
            body("RequestRide", #"{"dropOffLocation":{"name":"San Jose","latitude":37.3382,"longitude":-121.8863}}"#)
        )
        #expect(job.outcome == .stop)
        #expect(job.resolution("dropOffLocation") == ["kind": "unsupported", "reason": "outsideServiceArea"])
    }

    @Test func unknownPlaceWithoutCoordinatesIsUnsupported() async throws {
        let job = try await runJob(
            "RequestRide", .resolve, body("RequestRide", #"{"dropOffLocation":{"name":"Atlantis"}}"#))
        #expect(job.resolution("dropOffLocation")?["reason"] == "unknownLocation")
    }

    @Test func missingDropOffNeedsValueAndStops() async throws {
        let job = try await runJob("RequestRide", .resolve, body("RequestRide", "{}"))
        #expect(job.outcome == .stop)
        #expect(job.resolution("dropOffLocation") == ["kind": "needsValue"])
        #expect(job.kind("pickupLocation") == "notRequired")
    }

    @Test func rideOptionIsCanonicalisedAndPartySizeIsRangeChecked() async throws {
        let job = try await runJob(
            "RequestRide", .resolve,
            body(
                "RequestRide",
                #"{"dropOffLocation":{"name":"SFO"},"rideOptionName":"comfort","partySize":9,"scheduledPickupTime":{"hour":25,"minute":0}}"#
            )
        )
        #expect(job.resolution("rideOptionName") == ["kind": "success", "value": "Comfort"])
        #expect(job.parameter("rideOptionName") == "Comfort")
        #expect(job.resolution("partySize") == ["kind": "unsupported", "reason": "partySizeOutOfRange"])
        #expect(job.resolution("scheduledPickupTime")?["reason"] == "invalidPickupTime")
        #expect(job.parameter("partySize") == 9)  // unsupported values are not touched
        #expect(job.outcome == .stop)
    }

    // MARK: StartWorkout (seed 001: an open workout needs no goal)

    @Test func openEndedWorkoutGoalIsNotRequired() async throws {
        let job = try await runJob(
            "StartWorkout", .resolve,
            body("StartWorkout", #"{"workoutName":"run","goalValue":5,"isOpenEnded":true}"#)
        )
        #expect(job.resolution("goalValue") == ["kind": "notRequired"])
        #expect(job.resolution("workoutGoalUnitType") == ["kind": "notRequired"])
        #expect(job.resolution("workoutName") == ["kind": "success", "value": "run"])
        #expect(job.resolution("isOpenEnded") == ["kind": "success", "value": true])
        #expect(job.outcome == .continue)
    }

    @Test func workoutWithoutNameOrUnitNeedsValues() async throws {
        let job = try await runJob("StartWorkout", .resolve, body("StartWorkout", #"{"goalValue":5}"#))
        #expect(job.kind("workoutName") == "needsValue")
        #expect(job.kind("workoutGoalUnitType") == "needsValue")
        #expect(job.resolution("goalValue") == ["kind": "success", "value": 5.0])
        #expect(job.outcome == .stop)
    }

    @Test func nonPositiveGoalIsUnsupported() async throws {
        let job = try await runJob(
            "StartWorkout", .resolve,
            body("StartWorkout", #"{"workoutName":"run","goalValue":0,"workoutGoalUnitType":"mile"}"#)
        )
        #expect(job.resolution("goalValue") == ["kind": "unsupported", "reason": "goalValueNotPositive"])
        #expect(job.resolution("workoutGoalUnitType") == ["kind": "success", "value": "mile"])
    }

    // MARK: SendMessage (seed 000: John, Kate, custom identifiers)

    @Test func singleMatchingContactSucceedsWithCustomIdentifierWrittenBack() async throws {
        let job = try await runJob(
            "SendMessage", .resolve,
            body("SendMessage", #"{"recipient":{"displayName":"anna"},"content":"Hi","attachments":["a.png"]}"#)
        )
        #expect(job.outcome == .continue)
        let expected: JSONValue = [
            "displayName": "Anna Schmidt", "handle": "+49 30 5550101", "handleType": "phoneNumber",
            "customIdentifier": "contact-anna",
        ]
        #expect(job.resolution("recipient") == ["kind": "success", "value": expected])
        #expect(job.parameter("recipient") == expected)
        #expect(job.resolution("attachments") == ["kind": "notRequired"])
        #expect(job.parameter("attachments") == ["a.png"])
        #expect(job.resolution("content") == ["kind": "success", "value": "Hi"])
    }

    @Test func twoEquallyLikelyJohnsNeedDisambiguation() async throws {
        let job = try await runJob(
            "SendMessage", .resolve, body("SendMessage", #"{"recipient":{"displayName":"John"},"content":"Hi"}"#)
        )
        #expect(job.outcome == .stop)
        #expect(job.kind("recipient") == "disambiguation")
        let options = try #require(job.resolution("recipient")?["options"]?.arrayValue)
        #expect(
            options.compactMap { $0["customIdentifier"]?.stringValue } == [
                "contact-john-appleseed", "contact-john-doe",
            ])
        #expect(options.compactMap { $0["displayName"]?.stringValue } == ["John Appleseed", "John Doe"])
        #expect(job.parameter("recipient") == ["displayName": "John"])  // nothing chosen yet
    }

    @Test func chosenDisambiguationOptionResolvesWithoutMatchingOnTheNextRound() async throws {
        let first = try await runJob(
            "SendMessage", .resolve, body("SendMessage", #"{"recipient":{"displayName":"John"},"content":"Hi"}"#)
        )
        let chosen = try #require(first.resolution("recipient")?["options"]?[1])
        // The user picks the second option; the client sends it back as the recipient.
        var intent = try #require(first.json["intent"]?.objectValue)
        var parameters = try #require(intent["parameters"]?.objectValue)
        parameters["recipient"] = chosen
        intent["parameters"] = .object(parameters)
        let next = JSONValue.object(["intent": .object(intent), "resolve": first.json["resolve"]!]).serializedString()
        let second = try await runJob("SendMessage", .resolve, next)
        #expect(second.outcome == .continue)
        #expect(second.resolution("recipient")?["value"]?["customIdentifier"] == "contact-john-doe")
    }

    @Test func knownCustomIdentifierSkipsNameMatching() async throws {
        let job = try await runJob(
            "SendMessage", .resolve,
            body(
                "SendMessage",
                #"{"recipient":{"displayName":"John","customIdentifier":"contact-john-doe"},"content":"Hi"}"#)
        )
        #expect(job.kind("recipient") == "success")
        #expect(job.parameter("recipient")?["displayName"] == "John Doe")
        #expect(job.outcome == .continue)
    }

    @Test func favouriteKateNeedsConfirmationAndIsWrittenBack() async throws {
        let job = try await runJob(
            "SendMessage", .resolve, body("SendMessage", #"{"recipient":{"displayName":"Kate"},"content":"Hi"}"#)
        )
        #expect(job.outcome == .stop)
        #expect(job.kind("recipient") == "confirmationRequired")
        #expect(job.resolution("recipient")?["value"]?["customIdentifier"] == "contact-kate-bell")
        #expect(job.parameter("recipient")?["customIdentifier"] == "contact-kate-bell")
    }

    @Test func unknownContactIsUnsupportedWithReason() async throws {
        let job = try await runJob(
            "SendMessage", .resolve, body("SendMessage", #"{"recipient":{"displayName":"Zed"},"content":"Hi"}"#)
        )
        #expect(job.resolution("recipient") == ["kind": "unsupported", "reason": "noContactFound"])
        #expect(job.outcome == .stop)
    }

    @Test func missingRecipientAndContentNeedValues() async throws {
        let job = try await runJob("SendMessage", .resolve, body("SendMessage", #"{"content":"   "}"#))
        #expect(job.resolution("recipient") == ["kind": "needsValue"])
        #expect(job.resolution("content") == ["kind": "needsValue"])
        #expect(job.outcome == .stop)
    }

    // MARK: SendPayment (seed 000/001: payment amount and currency)

    @Test func paymentWithoutAmountNeedsValue() async throws {
        let job = try await runJob("SendPayment", .resolve, body("SendPayment", #"{"payee":{"displayName":"Anna"}}"#))
        #expect(job.resolution("currencyAmount") == ["kind": "needsValue"])
        #expect(job.kind("payee") == "success")
        #expect(job.kind("note") == "notRequired")
        #expect(job.outcome == .stop)
    }

    @Test(
        "unsupported currencies and amounts give SiriKit's reasons",
        arguments: [
            (#"{"amount":"20","currencyCode":"CHF"}"#, "paymentsCurrencyUnsupported"),
            (#"{"amount":"20","currencyCode":"CAD"}"#, "paymentsCurrencyUnsupported"),
            (#"{"amount":"10000.01","currencyCode":"USD"}"#, "paymentsAmountAboveMaximum"),
            (#"{"amount":"0","currencyCode":"EUR"}"#, "paymentsAmountBelowMinimum"),
        ]
    )
    func unsupportedPayments(amount: String, reason: String) async throws {
        let job = try await runJob(
            "SendPayment", .resolve,
            body("SendPayment", #"{"payee":{"displayName":"Anna"},"currencyAmount":\#(amount)}"#)
        )
        #expect(job.resolution("currencyAmount") == ["kind": "unsupported", "reason": .string(reason)])
        #expect(job.outcome == .stop)
    }

    @Test func supportedPaymentResolvesAndContinues() async throws {
        let job = try await runJob(
            "SendPayment", .resolve,
            body(
                "SendPayment",
                #"{"payee":{"displayName":"Anna Schmidt"},"currencyAmount":{"amount":"10000","currencyCode":"EUR"},"note":"rent"}"#
            )
        )
        #expect(job.outcome == .continue)
        #expect(
            job.resolution("currencyAmount") == [
                "kind": "success", "value": ["amount": "10000", "currencyCode": "EUR"],
            ])
        #expect(job.resolution("note") == ["kind": "success", "value": "rent"])
        #expect(job.parameter("payee")?["customIdentifier"] == "contact-anna")
    }

    // MARK: Runner rules

    @Test func resolutionForAnUndeclaredParameterIsAHandlerFailure() async throws {
        let job = try await runJob("Probe", .resolve, body("Probe", #"{"count":13}"#), provider: .probe)
        #expect(job.outcome == .error)
        #expect(job.json["code"] == "handler-failed")
        #expect(job.json["message"]?.stringValue?.contains("secret") == true)
    }

    @Test func defaultResolutionsCoverEveryDeclaredParameter() async throws {
        let job = try await runJob("Probe", .resolve, body("Probe", #"{"count":1,"tags":["x"]}"#), provider: .probe)
        #expect(job.outcome == .continue)
        let resolve = try #require(job.json["resolve"]?.objectValue)
        #expect(Set(resolve.keys) == Set(ProbeIntent.parameters.map(\.name)))
        #expect(job.resolution("count") == ["kind": "success", "value": 1])
        #expect(job.resolution("tags") == ["kind": "success", "value": ["x"]])
        #expect(job.resolution("who") == ["kind": "notRequired"])
    }
}
