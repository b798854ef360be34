import ConciergeExamples
import IntentKit
import IntentTesting
import Testing

/// Conversations with the demo handlers (`Docs/DEMO-DATA.md`): each answer runs the next turn with the intent the last
/// output carried.
@Suite struct ConversationTests {
    static func message(to name: String?, _ content: String? = "Running 5 minutes late") -> SendMessageIntent {
        SendMessageIntent(recipient: name.map { Person(displayName: $0) }, content: content)
    }

    @Test func johnIsDisambiguatedThenChosenThenConfirmedThenHandled() async throws {
        var conversation = IntentConversation(
            provider: Examples.provider, intent: Self.message(to: "John"), confirmsBeforeHandle: true)
        let first = try await conversation.send()
        #expect(try first.resolution(\.recipient).options?.map(\.displayName) == ["John Appleseed", "John Doe"])
        let second = try await conversation.choose(\.recipient, option: 0)
        #expect(second.phase == .confirm && second.confirm?.code == .ready)
        let last = try await conversation.confirm()
        #expect(last.handle?.code == .success, "\(conversation.transcript)")
        #expect(last.handle?.data?["recipient"] == "contact-john-appleseed")
        #expect(conversation.hasEnded)
    }

    @Test func withoutConfirmingBeforeHandleAChoiceRunsOnThroughConfirmAndHandle() async throws {
        var conversation = IntentConversation(provider: Examples.provider, intent: Self.message(to: "John"))
        try await conversation.send()
        let turn = try await conversation.choose(\.recipient, option: 1)
        #expect(turn.phase == .handle)
        #expect(turn.confirm?.code == .ready)
        #expect(turn.handle?.data?["recipient"] == "contact-john-doe")
        #expect(
            conversation.transcript.entries.map(\.ran) == [
                ["resolve stop"], ["resolve continue", "confirm continue", "handle stop"],
            ])
    }

    @Test func theResolvedIntentIsCarriedIntoTheNextTurn() async throws {
        // "Kate" resolves confirmationRequired(Kate Bell): the value is written back, with its customIdentifier.
        var conversation = IntentConversation(provider: Examples.provider, intent: Self.message(to: "Kate"))
        let first = try await conversation.send()
        #expect(first.intent.recipient?.customIdentifier == "contact-kate-bell")
        #expect(conversation.intent.recipient?.customIdentifier == "contact-kate-bell")
        let second = try await conversation.confirm(\.recipient)
        #expect(try second.resolution(\.recipient) == .success(DemoData.contacts[3].person))
        #expect(second.handle?.data?["recipient"] == "contact-kate-bell")
    }

    @Test func confirmWithoutAKeyPathConfirmsEveryValueThatNeedsConfirmation() async throws {
        var conversation = IntentConversation(provider: Examples.provider, intent: Self.message(to: "Kate"))
        try await conversation.send()
        let turn = try await conversation.confirm()
        #expect(turn.handle?.code == .success)
    }

    @Test func aNeededValueIsAnsweredAndTheLifecycleGoesOn() async throws {
        var conversation = IntentConversation(provider: Examples.provider, intent: Self.message(to: "Anna", nil))
        let first = try await conversation.send()
        #expect(try first.resolution(\.content) == .needsValue)
        #expect(conversation.asked == "content: needsValue")
        let second = try await conversation.answer(\.content, "Hi")
        #expect(second.handle?.code == .success)
        #expect(second.intent.content == "Hi")
    }

    @Test func anUnsupportedValueCanBeReplaced() async throws {
        let tooMuch = SendPaymentIntent(
            payee: Person(displayName: "Anna"), currencyAmount: .init("20000", currencyCode: "EUR"))
        var conversation = IntentConversation(provider: Examples.provider, intent: tooMuch)
        let first = try await conversation.send()
        #expect(try first.resolution(\.currencyAmount).reason == "paymentsAmountAboveMaximum")
        let second = try await conversation.answer(\.currencyAmount, try #require(.init("20", currencyCode: "EUR")))
        #expect(second.handle?.code == .success)
    }

    @Test func aConfirmCodeOtherThanReadyEndsTheConversation() async throws {
        // "Send Anna 5000 euros" (Schemas/PROTOCOL.md 12.4): the demo account holds 2500.
        let payment = SendPaymentIntent(
            payee: Person(displayName: "Anna"), currencyAmount: .init("5000", currencyCode: "EUR"))
        var conversation = IntentConversation(provider: Examples.provider, intent: payment, confirmsBeforeHandle: true)
        let turn = try await conversation.send()
        #expect(turn.phase == .confirm && turn.outcome == .stop)
        #expect(turn.confirm?.code == .failureInsufficientFunds)
        #expect(turn.intent.payee?.displayName == "Anna Schmidt")
        #expect(conversation.hasEnded)
    }
}
