import IntentKit
import IntentTesting
import PizzaIntents
import Testing

/// The handler, tested as a client would talk to it (IntentTesting): no broker, no worker process.
@Suite struct OrderPizzaTests {
    let provider: HandlerProvider = {
        var provider = HandlerProvider()
        provider.register { OrderPizzaHandler() }
        return provider
    }()

    @Test func aConversationAsksForTheSizeThenWhichMainStreetThenOrders() async throws {
        var conversation = IntentConversation(provider: provider, intent: OrderPizzaIntent(address: "1 Main Street"))
        let first = try await conversation.send()
        #expect(first.resolutionKind(\.size) == .needsValue)  // required in the definition: asked for by default
        let second = try await conversation.answer(\.size, .large)
        #expect(
            try second.resolution(\.address).options == ["1 Main Street, Springfield", "1 Main Street, Shelbyville"])
        let last = try await conversation.choose(\.address, option: 0)
        #expect(last.handle?.code == .success, "\(conversation.transcript)")
        #expect(last.handle?.data?["etaMinutes"] == 40)
    }

    @Test func aToppingOffTheMenuIsUnsupportedWithItsReason() async throws {
        var conversation = IntentConversation(
            provider: provider,
            intent: OrderPizzaIntent(size: .small, toppings: ["pineapple"], address: "5 Elm Street"))
        let turn = try await conversation.send()
        #expect(try turn.resolution(\.toppings).reason == "toppingNotOnTheMenu")
        let fixed = try await conversation.answer(\.toppings, ["ham"])
        #expect(fixed.handle?.code == .success)
    }

    @Test func anAddressOutsideTheDeliveryAreaEndsAtConfirmWithItsCode() async throws {
        var conversation = IntentConversation(
            provider: provider, intent: OrderPizzaIntent(size: .medium, address: "1 Main Street"))
        try await conversation.send()
        let turn = try await conversation.choose(\.address, option: 1)
        #expect(turn.confirm?.code == .failureOutsideDeliveryArea)
        await #expect(throws: IntentTestingError.self) { try await conversation.confirm() }  // it has ended
    }

    @Test func handleWithoutARequiredParameterNeverReachesTheHandler() async throws {
        // The handler force-unwraps `size`: the job ends missing-parameter before it runs, and nothing crashes.
        let turn = try await TestHandlerContext().run(
            OrderPizzaIntent(address: "5 Elm Street"), phase: .handle, on: provider)
        #expect(turn.error?.code == .missingParameter)
        #expect(turn.error?.parameter == "size")
    }

    @Test func answeringAQuestionThatWasNotAskedIsAClearError() async throws {
        var conversation = IntentConversation(provider: provider, intent: OrderPizzaIntent(address: "5 Elm Street"))
        try await conversation.send()  // asks for the size only
        await #expect(throws: IntentTestingError.self) { try await conversation.choose(\.address, option: 0) }
    }
}
