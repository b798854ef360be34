import ConciergeExamples
import IntentKit
import IntentTesting
import Testing

/// Answering a question that was not asked throws an ``IntentTestingError`` with a stable code, the parameter, what
/// was asked instead, and the transcript.
@Suite struct WrongAnswerTests {
    /// A conversation about "John" (recipient in disambiguation), after its first turn.
    static func john(confirmsBeforeHandle: Bool = false) async throws -> IntentConversation<SendMessageIntent> {
        var conversation = IntentConversation(
            provider: Examples.provider,
            intent: SendMessageIntent(recipient: Person(displayName: "John"), content: "Hi"),
            confirmsBeforeHandle: confirmsBeforeHandle
        )
        try await conversation.send()
        return conversation
    }

    /// The error `answer` throws (failing the test when it throws none).
    static func error(
        _ answer: (inout IntentConversation<SendMessageIntent>) async throws -> Void,
        in conversation: IntentConversation<SendMessageIntent>,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async -> IntentTestingError? {
        var conversation = conversation
        do {
            try await answer(&conversation)
            Issue.record("the answer was accepted", sourceLocation: sourceLocation)
            return nil
        } catch let error as IntentTestingError {
            return error
        } catch {
            Issue.record("not an IntentTestingError: \(error)", sourceLocation: sourceLocation)
            return nil
        }
    }

    @Test func choosingAnOptionOfAParameterNotInDisambiguationNamesItAndWhatWasAsked() async throws {
        let error = try #require(
            await Self.error({ try await $0.choose(\.content, option: 0) }, in: try await Self.john()))
        #expect(error.code == .notInDisambiguation)
        #expect(error.parameter == "content")
        #expect(error.message == "cannot choose an option of content: its resolution is success, not disambiguation")
        #expect(error.asked == "recipient: disambiguation (2 options)")
        #expect(error.transcript?.entries.count == 1)
        #expect(error.description.contains("1. send "))
    }

    @Test func anOptionIndexOutOfRangeSaysHowManyThereAre() async throws {
        for index in [2, -1] {
            let error = try #require(
                await Self.error({ try await $0.choose(\.recipient, option: index) }, in: try await Self.john()))
            #expect(error.code == .optionOutOfRange)
            #expect(error.parameter == "recipient")
            #expect(error.message == "recipient has 2 options (0...1), not option \(index)")
        }
    }

    @Test func aValueForAParameterThatWasNotAskedForIsRefused() async throws {
        let john = try await Self.john()
        let error = try #require(
            await Self.error({ try await $0.answer(\.recipient, Person(displayName: "Anna")) }, in: john))
        #expect(error.code == .valueNotAsked)
        #expect(error.parameter == "recipient")
        #expect(error.asked == "recipient: disambiguation (2 options)")
    }

    @Test func confirmingWhenNothingAskedForConfirmationIsRefused() async throws {
        let john = try await Self.john()
        let byKeyPath = try #require(await Self.error({ try await $0.confirm(\.recipient) }, in: john))
        #expect(byKeyPath.code == .nothingToConfirm)
        #expect(
            byKeyPath.message == "cannot confirm recipient: its resolution is disambiguation, not confirmationRequired")
        let any = try #require(await Self.error({ try await $0.confirm() }, in: john))
        #expect(any.code == .nothingToConfirm)
        #expect(any.asked == "recipient: disambiguation (2 options)")
    }

    @Test func answeringAParameterWhileTheConfirmStepWaitsIsRefused() async throws {
        var conversation = try await Self.john(confirmsBeforeHandle: true)
        try await conversation.choose(\.recipient, option: 0)
        let error = try #require(await Self.error({ try await $0.choose(\.recipient, option: 0) }, in: conversation))
        #expect(error.code == .notInDisambiguation)
        #expect(error.asked == "confirmation of the confirm step, which answered ready")
    }

    @Test func continuingAfterHandleEndedIsRefused() async throws {
        var conversation = try await Self.john()
        try await conversation.choose(\.recipient, option: 0)
        #expect(conversation.hasEnded)
        for answer: (inout IntentConversation<SendMessageIntent>) async throws -> Void in [
            { try await $0.confirm() }, { try await $0.send() }, { try await $0.choose(\.recipient, option: 0) },
            { try await $0.answer(\.content, "again") },
        ] {
            let error = try #require(await Self.error(answer, in: conversation))
            #expect(error.code == .conversationEnded)
            #expect(error.asked == "nothing: the conversation ended: handle answered success")
            #expect(error.transcript?.entries.count == 2)
        }
    }

    @Test func answeringBeforeSendingIsRefused() async throws {
        let conversation = IntentConversation(provider: Examples.provider, intent: SendMessageIntent())
        let error = try #require(await Self.error({ try await $0.confirm() }, in: conversation))
        #expect(error.code == .notStarted)
    }

    @Test func aKeyPathThatIsNotADeclaredParameterIsRefused() async throws {
        let error = try #require(
            await Self.error({ try await $0.answer(\.identifier, "x") }, in: try await Self.john()))
        #expect(error.code == .unknownParameter)
    }
}
