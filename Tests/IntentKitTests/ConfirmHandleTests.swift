import ConciergeExamples
import ConciergeJSON
import IntentKit
import Testing

@Suite("Confirm and handle")
struct ConfirmHandleTests {
    @Test func outdoorWorkoutWithoutLocationServicesRequiresAppLaunchWithUserActivity() async throws {
        let job = try await runJob(
            "StartWorkout", .confirm, body("StartWorkout", #"{"workoutName":"run","workoutLocationType":"outdoor"}"#)
        )
        #expect(job.outcome == .stop)
        let confirm = try #require(job.json["confirm"])
        #expect(confirm["code"] == "failureRequiringAppLaunch")
        #expect(confirm["userActivity"]?["activityType"] == "com.example.concierge.noLocationAvailable")
        #expect(confirm["userActivity"]?["userInfo"]?["workoutName"] == "run")
    }

    @Test func indoorWorkoutConfirmsReadyAndContinues() async throws {
        let job = try await runJob(
            "StartWorkout", .confirm, body("StartWorkout", #"{"workoutName":"yoga","workoutLocationType":"indoor"}"#)
        )
        #expect(job.outcome == .continue)
        #expect(job.json["confirm"] == ["code": "ready"])
    }

    @Test func workoutHandleContinuesInAppWithTheDefaultUserActivity() async throws {
        let input = body("StartWorkout", #"{"workoutName":"yoga","workoutLocationType":"indoor"}"#)
        let job = try await runJob("StartWorkout", .handle, input)
        #expect(job.outcome == .stop)
        let handle = try #require(job.json["handle"])
        #expect(handle["code"] == "continueInApp")
        let activity = try #require(handle["userActivity"])
        #expect(activity["activityType"] == "StartWorkout")
        let interaction = try #require(activity["userInfo"]?["interaction"])
        #expect(interaction["intent"] == (try json(input))["intent"])
        #expect(interaction["response"] == ["code": "continueInApp"])
    }

    @Test func rideHandleBooksWithRideIdAndEta() async throws {
        let job = try await runJob(
            "RequestRide", .handle,
            body(
                "RequestRide",
                #"{"dropOffLocation":{"name":"SFO"},"pickupLocation":{"latitude":37.7749,"longitude":-122.4194},"partySize":2}"#
            )
        )
        #expect(job.outcome == .stop)
        let handle = try #require(job.json["handle"])
        #expect(handle["code"] == "success")
        #expect(handle["data"]?["rideId"]?.stringValue?.hasPrefix("ride-") == true)
        #expect(handle["data"]?["etaMinutes"] == 3)
        #expect(handle["data"]?["partySize"] == 2)
        #expect(handle["userActivity"]?["userInfo"]?["interaction"]?["response"]?["data"] == handle["data"])
    }

    @Test func rideOutsideServiceAreaAnswersTheIntentSpecificHandleCode() async throws {
        let job = try await runJob("RequestRide", .handle, body("RequestRide", #"{"dropOffLocation":{"name":"Napa"}}"#))
        #expect(job.json["handle"]?["code"] == "failureRequiringAppLaunchNoServiceInArea")
    }

    @Test func paymentAboveBalanceConfirmsInsufficientFunds() async throws {
        let job = try await runJob(
            "SendPayment", .confirm,
            body(
                "SendPayment",
                #"{"payee":{"displayName":"Anna"},"currencyAmount":{"amount":"3000","currencyCode":"USD"}}"#)
        )
        #expect(job.outcome == .stop)
        #expect(job.json["confirm"]?["code"] == "failureInsufficientFunds")
    }

    @Test func paymentConfirmsReadyAndHandlesWithTransactionId() async throws {
        let input = body(
            "SendPayment", #"{"payee":{"displayName":"Anna"},"currencyAmount":{"amount":"12.50","currencyCode":"EUR"}}"#
        )
        let confirm = try await runJob("SendPayment", .confirm, input)
        #expect(confirm.outcome == .continue)
        #expect(confirm.json["confirm"]?["code"] == "ready")
        #expect(confirm.json["confirm"]?["data"]?["payee"] == "Anna Schmidt")
        let handle = try await runJob("SendPayment", .handle, confirm.json.serializedString())
        #expect(handle.json["handle"]?["code"] == "success")
        #expect(handle.json["handle"]?["data"]?["transactionId"]?.stringValue?.hasPrefix("txn-") == true)
        #expect(handle.json["handle"]?["data"]?["currencyAmount"] == ["amount": "12.5", "currencyCode": "EUR"])
        #expect(handle.json["confirm"]?["code"] == "ready")  // the previous phase's result is kept
    }

    @Test func messageHandleSucceedsWithMessageId() async throws {
        let job = try await runJob(
            "SendMessage", .handle, body("SendMessage", #"{"recipient":{"displayName":"Anna"},"content":"Hi"}"#)
        )
        #expect(job.json["handle"]?["code"] == "success")
        #expect(job.json["handle"]?["data"]?["recipient"] == "contact-anna")
        #expect(job.json["handle"]?["data"]?["messageId"]?.stringValue?.hasPrefix("msg-") == true)
    }

    @Test func outputKeepsOtherKeysOfTheInteraction() async throws {
        let input =
            #"{"intent":{"type":"Echo","identifier":"req-7","parameters":{"text":"hi"}},"resolve":{"text":{"kind":"success","value":"hi"}},"extra":[1,2]}"#
        let job = try await runJob("Echo", .handle, input)
        #expect(job.json["resolve"] == ["text": ["kind": "success", "value": "hi"]])
        #expect(job.json["extra"] == [1, 2])
        #expect(job.json["intent"]?["identifier"] == "req-7")
        #expect(job.json["handle"]?["code"] == "success")
    }

    @Test func undeclaredResponseCodesBecomeFailures() async throws {
        let confirm = try await runJob("Probe", .confirm, body("Probe", #"{"count":7}"#), provider: .probe)
        #expect(confirm.outcome == .stop)
        #expect(confirm.json["confirm"]?["code"] == "failure")
        #expect(confirm.json["confirm"]?["message"]?.stringValue?.contains("bogusCode") == true)
        let handle = try await runJob("Probe", .handle, body("Probe", #"{"count":7}"#), provider: .probe)
        #expect(handle.json["handle"]?["code"] == "failure")
        #expect(handle.json["handle"]?["userActivity"]?["activityType"] == "Probe")
    }

    @Test func runnerSetsThePhaseInTheContext() async throws {
        let job = try await runJob("Probe", .handle, body("Probe", "{}"), provider: .probe)
        #expect(job.json["handle"]?["data"] == ["phase": "handle", "jobID": "job-1", "worker": "test-worker"])
    }

    // MARK: Throwing handlers

    @Test func throwingResolveIsAHandlerFailedError() async throws {
        let job = try await runJob(
            "Echo", .resolve, body("Echo", #"{"failWith":"resolver exploded","delayPhase":"resolve"}"#))
        #expect(job.outcome == .error)
        #expect(job.json["code"] == "handler-failed")
        #expect(job.json["message"]?.stringValue?.contains("resolver exploded") == true)
        #expect(job.json.objectValue?.keys.sorted() == ["code", "message"])
    }

    @Test func throwingConfirmAnswersFailureWithMessage() async throws {
        let job = try await runJob(
            "Echo", .confirm, body("Echo", #"{"failWith":"no capacity","delayPhase":"confirm"}"#))
        #expect(job.outcome == .stop)
        #expect(job.json["confirm"] == ["code": "failure", "message": "no capacity"])
    }

    @Test func throwingHandleAnswersFailureWithMessageAndDefaultActivity() async throws {
        let job = try await runJob("Echo", .handle, body("Echo", #"{"failWith":"disk full"}"#))
        #expect(job.outcome == .stop)
        let handle = try #require(job.json["handle"])
        #expect(handle["code"] == "failure")
        #expect(handle["message"] == "disk full")
        #expect(handle["userActivity"]?["userInfo"]?["interaction"]?["response"] == ["code": "failure"])
    }

    @Test func failWithOnlyActsInItsPhase() async throws {
        let job = try await runJob("Echo", .confirm, body("Echo", #"{"failWith":"later"}"#))
        #expect(job.json["confirm"]?["code"] == "ready")
    }
}
