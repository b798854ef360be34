import ConciergeExamples
import IntentKit
import IntentTesting
import Testing

/// A turn decodes each phase result into typed values: resolutions by key path or name, the confirm and handle
/// responses, and errors.
@Suite struct TypedResultTests {
    static let context = TestHandlerContext()

    static func resolve<I: Intent>(_ intent: I) async throws -> IntentTurn<I> {
        try await context.run(intent, phase: .resolve, on: Examples.provider)
    }

    @Test func successGivesTheTypedValueWrittenBack() async throws {
        let turn = try await Self.resolve(SendMessageIntent(recipient: Person(displayName: "anna"), content: "Hi"))
        let anna = DemoData.contacts[0].person
        #expect(try turn.resolution(\.recipient) == .success(anna))
        #expect(try turn.resolution(\.recipient).resolvedValue?.customIdentifier == "contact-anna")
        #expect(try turn.resolution(\.content) == .success("Hi"))
        #expect(turn.intent.recipient == anna)
        #expect(turn.isResolved)
    }

    @Test func disambiguationGivesTheTypedOptions() async throws {
        let turn = try await Self.resolve(SendMessageIntent(recipient: Person(displayName: "John"), content: "Hi"))
        let options = try #require(try turn.resolution(\.recipient).options)
        #expect(options == [DemoData.contacts[1].person, DemoData.contacts[2].person])
        #expect(turn.resolutionKind(\.recipient) == .disambiguation)
        #expect(!turn.isResolved)
    }

    @Test func notRequiredNeedsValueConfirmationRequiredAndUnsupportedAreTyped() async throws {
        let kate = try await Self.resolve(SendMessageIntent(recipient: Person(displayName: "Kate")))
        #expect(try kate.resolution(\.recipient) == .confirmationRequired(DemoData.contacts[3].person))
        #expect(try kate.resolution(\.content) == .needsValue)
        #expect(try kate.resolution(\.attachments) == .notRequired)
        let nobody = try await Self.resolve(SendMessageIntent(recipient: Person(displayName: "Zed"), content: "Hi"))
        #expect(try nobody.resolution(\.recipient) == .unsupported(reason: "noContactFound"))
        #expect(try nobody.resolution(\.recipient).reason == "noContactFound")
        #expect(nobody.unresolved.map(\.name) == ["recipient"])
    }

    @Test func aResolutionIsFoundByNameToo() async throws {
        let turn = try await Self.resolve(
            SendPaymentIntent(payee: Person(displayName: "Anna"), currencyAmount: .init("5", currencyCode: "GBP")))
        let amount = try turn.resolution(named: "currencyAmount", as: CurrencyAmount.self)
        #expect(amount == .unsupported(reason: "paymentsCurrencyUnsupported"))
        #expect(turn.resolutionKind(named: "payee") == .success)
        #expect(turn.resolutionKind(named: "nope") == nil)
    }

    @Test func theConfirmResponseIsTyped() async throws {
        let outdoor = StartWorkoutIntent(workoutName: "run", workoutLocationType: .outdoor, isOpenEnded: true)
        let turn = try await Self.context.run(outdoor, phase: .confirm, on: Examples.provider)
        let confirm = try #require(turn.confirm)
        #expect(confirm.code == .failureRequiringAppLaunch)
        #expect(confirm.userActivity?.activityType == StartWorkoutHandler.noLocationActivityType)
        #expect(confirm.userActivity?.userInfo["workoutName"] == "run")
        #expect(confirm.message == "location services are not available for an outdoor workout")
        let ride = RequestRideIntent(dropOffLocation: Placemark(name: "SFO"))
        let ready = try await Self.context.run(ride, phase: .confirm, on: Examples.provider)
        #expect(ready.confirm?.code == .ready)
        #expect(ready.confirm?.data?["rideOption"] == "Economy")
    }

    @Test func theHandleResponseIsTypedWithItsDefaultUserActivity() async throws {
        let indoor = StartWorkoutIntent(workoutName: "yoga", workoutLocationType: .indoor, isOpenEnded: true)
        let turn = try await Self.context.run(indoor, phase: .handle, on: Examples.provider)
        let handle = try #require(turn.handle)
        #expect(handle.code == .continueInApp)
        #expect(handle.userActivity?.activityType == "StartWorkout")
        #expect(handle.userActivity?.userInfo["interaction"]?["intent"] == indoor.jsonValue)
        let message = SendMessageIntent(recipient: DemoData.contacts[0].person, content: "Hi")
        let sent = try await Self.context.run(message, phase: .handle, on: Examples.provider)
        #expect(sent.handle?.code == .success)
        #expect(sent.handle?.data?["recipient"] == "contact-anna")
    }

    @Test func anErrorIsTypedWithItsCodeMessageAndParameter() async throws {
        // A client's body whose recipient is a string, not a person.
        let body = #"{"intent":{"type":"SendMessage","parameters":{"recipient":"John"}}}"#
        let output = await Examples.provider.run(
            intentType: "SendMessage", phase: .resolve, body: Array(body.utf8), context: HandlerContext())
        let turn = try IntentTurn(phase: .resolve, output: output, sent: SendMessageIntent())
        #expect(turn.outcome == .error)
        let error = try #require(turn.error)
        #expect(error.code == .invalidType)
        #expect(error.parameter == "recipient")
        #expect(error.message == "SendMessage.recipient (person): expected person object, got string")
        #expect(turn.intent == SendMessageIntent())
    }

    @Test func accessorsThatFindNothingThrowWithAStableCode() async throws {
        let confirmOnly = try await Self.context.run(
            SendMessageIntent(recipient: Person(displayName: "Anna")), phase: .confirm, on: Examples.provider)
        #expect(throws: IntentTestingError.self) { try confirmOnly.resolution(\.recipient) }
        #expect(Self.code { try confirmOnly.resolution(\.recipient) } == .noResolution)
        let turn = try await Self.resolve(SendMessageIntent(recipient: Person(displayName: "Anna")))
        #expect(Self.code { try turn.resolution(named: "sender", as: Person.self) } == .unknownParameter)
        #expect(Self.code { try turn.resolution(named: "recipient", as: String.self) } == .undecodable)
    }

    @Test func aTurnDecodesAnyLifecycleResult() async throws {
        let intent = SendMessageIntent(recipient: Person(displayName: "John"), content: "Hi")
        let result = await Examples.provider.runLifecycle(intent)
        let turn = try IntentTurn(result, sent: intent)
        #expect(turn.phase == .resolve && turn.outcome == .stop)
        #expect(try turn.resolution(\.recipient).options?.count == 2)
    }

    static func code(_ body: () throws -> some Any) -> IntentTestingError.Code? {
        do { _ = try body() } catch { return (error as? IntentTestingError)?.code }
        return nil
    }
}
