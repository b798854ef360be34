public import IntentKit

/// Drives a handler through a conversation with the user, turn by turn, without a broker or worker.
///
/// ``send()`` runs the lifecycle as the broker does: resolve, then confirm, then handle, each phase given the
/// previous one's output, stopping where the user is needed (a parameter that is not `success` or `notRequired`,
/// a confirm code other than `ready`, the end of handle, or an error). Then answer what was asked, as a client
/// would: ``choose(_:option:)`` an option of a disambiguation, ``answer(_:_:)`` a needed value, ``confirm(_:)`` a
/// value that needs confirmation. Each answer starts a new turn from resolve with the intent of the last output
/// (where resolved values were written back, such as a person's `customIdentifier`) and the answer set in it.
///
/// With `confirmsBeforeHandle`, a confirm that answers `ready` also waits for the user (as Siri asks "Ready to
/// send?"): ``confirm()`` then goes on to handle with the confirm phase's output.
///
/// ```swift
/// var conversation = IntentConversation(
///     provider: Examples.provider,
///     intent: SendMessageIntent(recipient: Person(displayName: "John"), content: "Running late"),
///     confirmsBeforeHandle: true
/// )
/// let first = try await conversation.send()
/// #expect(try first.resolution(\.recipient).options?.count == 2)
/// let second = try await conversation.choose(\.recipient, option: 0)
/// #expect(second.confirm?.code == .ready)
/// let last = try await conversation.confirm()
/// #expect(last.handle?.code == .success)
/// ```
///
/// Answering a question that was not asked throws an ``IntentTestingError`` naming the parameter, what was asked
/// instead, and the ``transcript`` of the turns so far.
public struct IntentConversation<I: Intent>: Sendable {
    /// The provider whose handlers run.
    public let provider: HandlerProvider
    /// The intent the next turn sends: the one given, then the intent of the last output with any answer set.
    public var intent: I
    /// The context of every job, with the cancellation the test controls.
    public var context: TestHandlerContext
    /// Whether a confirm that answers `ready` waits for ``confirm()`` before handle runs.
    public var confirmsBeforeHandle: Bool
    /// The turns so far, first first.
    public private(set) var turns: [IntentTurn<I>] = []
    /// What was said and answered so far, for failure messages.
    public private(set) var transcript = ConversationTranscript()
    /// The body of the last output (the confirm phase's, when handle waits for ``confirm()``).
    private var lastBody: [UInt8] = []

    /// Creates a conversation that has not started.
    /// - Parameters:
    ///   - provider: The provider whose handlers run (`I` must be registered).
    ///   - intent: What the user asked for.
    ///   - context: The context of every job; a default one with a new cancellation when left out.
    ///   - confirmsBeforeHandle: Whether a `ready` confirm waits for ``confirm()`` before handle runs.
    public init(
        provider: HandlerProvider,
        intent: I,
        context: TestHandlerContext = TestHandlerContext(),
        confirmsBeforeHandle: Bool = false
    ) {
        self.provider = provider
        self.intent = intent
        self.context = context
        self.confirmsBeforeHandle = confirmsBeforeHandle
    }

    /// The last turn, or nil before ``send()``.
    public var lastTurn: IntentTurn<I>? { turns.last }

    /// Whether the conversation has ended: handle ran, confirm answered a code other than `ready`, or a phase
    /// ended in an error or a cancellation.
    public var hasEnded: Bool {
        if case .ended = waiting { return true }
        return false
    }

    /// What the conversation waits for now, in words (e.g. `recipient: disambiguation (2 options)`).
    public var asked: String { waiting.description }

    // MARK: Turns

    /// Sends ``intent`` from resolve on, as a client's `lifecycle` request: the first turn, or again after the test
    /// changed ``intent`` itself.
    /// - Throws: ``IntentTestingError`` with code ``IntentTestingError/Code/conversationEnded`` after the end, or
    ///   ``IntentTestingError/Code/undecodable`` when an output does not decode.
    @discardableResult
    public mutating func send() async throws(IntentTestingError) -> IntentTurn<I> {
        if case .ended(let why) = waiting {
            throw refusal(.conversationEnded, "nothing more can be sent: \(why)")
        }
        return try await resolveAgain(said: "send " + IntentTurn<I>.short(intent.jsonValue, limit: 160))
    }

    /// Chooses option `index` (from 0) of the disambiguation of the parameter at `keyPath`, and runs the next turn
    /// with it as the parameter's value.
    /// - Throws: ``IntentTestingError`` with code ``IntentTestingError/Code/notInDisambiguation`` when the last
    ///   turn did not ask to choose a value of that parameter, ``IntentTestingError/Code/optionOutOfRange`` when
    ///   there is no option `index`, ``IntentTestingError/Code/notStarted``,
    ///   ``IntentTestingError/Code/conversationEnded``, ``IntentTestingError/Code/unknownParameter``.
    @discardableResult
    public mutating func choose<Value: IntentParameterValue>(_ keyPath: WritableKeyPath<I, Value?>, option index: Int)
        async throws(IntentTestingError) -> IntentTurn<I>
    {
        let (name, resolution) = try askedResolution(keyPath, code: .notInDisambiguation, verb: "choose an option of")
        guard case .disambiguation(let options) = resolution else {
            throw refusal(
                .notInDisambiguation,
                "cannot choose an option of \(name): its resolution is \(resolution.kind), not disambiguation",
                parameter: name)
        }
        guard options.indices.contains(index) else {
            throw refusal(
                .optionOutOfRange,
                "\(name) has \(options.count) options (0...\(options.count - 1)), not option \(index)",
                parameter: name)
        }
        intent[keyPath: keyPath] = options[index]
        return try await resolveAgain(said: "choose \(name) option \(index)")
    }

    /// Gives `value` for the parameter at `keyPath`, which the last turn resolved `needsValue` (or `unsupported`:
    /// the user says something else), and runs the next turn.
    /// - Throws: ``IntentTestingError`` with code ``IntentTestingError/Code/valueNotAsked`` when the last turn did
    ///   not ask for a value of that parameter, ``IntentTestingError/Code/notStarted``,
    ///   ``IntentTestingError/Code/conversationEnded``, ``IntentTestingError/Code/unknownParameter``.
    @discardableResult
    public mutating func answer<Value: IntentParameterValue>(_ keyPath: WritableKeyPath<I, Value?>, _ value: Value)
        async throws(IntentTestingError) -> IntentTurn<I>
    {
        let (name, resolution) = try askedResolution(keyPath, code: .valueNotAsked, verb: "give a value for")
        guard resolution.kind == .needsValue || resolution.kind == .unsupported else {
            throw refusal(
                .valueNotAsked,
                "cannot give a value for \(name): its resolution is \(resolution.kind), not needsValue or unsupported",
                parameter: name)
        }
        intent[keyPath: keyPath] = value
        return try await resolveAgain(said: "answer \(name) " + IntentTurn<I>.short(value.intentJSON))
    }

    /// Confirms the value the last turn resolved `confirmationRequired` for the parameter at `keyPath`, and runs
    /// the next turn with it.
    /// - Throws: ``IntentTestingError`` with code ``IntentTestingError/Code/nothingToConfirm`` when that parameter
    ///   does not need confirmation, ``IntentTestingError/Code/notStarted``,
    ///   ``IntentTestingError/Code/conversationEnded``, ``IntentTestingError/Code/unknownParameter``.
    @discardableResult
    public mutating func confirm<Value: IntentParameterValue>(_ keyPath: WritableKeyPath<I, Value?>)
        async throws(IntentTestingError) -> IntentTurn<I>
    {
        let (name, resolution) = try askedResolution(keyPath, code: .nothingToConfirm, verb: "confirm")
        guard case .confirmationRequired(let value) = resolution else {
            throw refusal(
                .nothingToConfirm,
                "cannot confirm \(name): its resolution is \(resolution.kind), not confirmationRequired",
                parameter: name)
        }
        intent[keyPath: keyPath] = value
        return try await resolveAgain(said: "confirm \(name)")
    }

    /// Confirms what the last turn asked to confirm: the confirm step that answered `ready` (with
    /// `confirmsBeforeHandle`), then runs handle; or else every parameter resolved `confirmationRequired`, then runs
    /// the next turn from resolve.
    /// - Throws: ``IntentTestingError`` with code ``IntentTestingError/Code/nothingToConfirm`` when nothing waits for
    ///   confirmation, ``IntentTestingError/Code/notStarted``, ``IntentTestingError/Code/conversationEnded``.
    @discardableResult
    public mutating func confirm() async throws(IntentTestingError) -> IntentTurn<I> {
        switch waiting {
        case .notStarted:
            throw refusal(.notStarted, "cannot confirm before the conversation is sent")
        case .ended(let why):
            throw refusal(.conversationEnded, "cannot confirm: \(why)")
        case .confirmStep:
            return try await run(said: "confirm", from: .handle, body: lastBody)
        case .parameters(let unresolved):
            let names = unresolved.filter { $0.kind == .confirmationRequired }.map(\.name)
            guard !names.isEmpty else {
                throw refusal(.nothingToConfirm, "cannot confirm: no parameter is confirmationRequired")
            }
            // The values to confirm are already written back into the intent of the output.
            return try await resolveAgain(said: "confirm " + names.joined(separator: ", "))
        }
    }

    // MARK: Running

    /// Runs a turn from resolve with a body of just ``intent``, as a client's new request.
    private mutating func resolveAgain(said: String) async throws(IntentTestingError) -> IntentTurn<I> {
        try await run(said: said, from: .resolve, body: JSONValue.object(["intent": intent.jsonValue]).serialized())
    }

    /// Runs phases from `phase`, each with the previous one's output, until one does not continue (or a `ready`
    /// confirm that waits for the user), and records the turn.
    private mutating func run(said: String, from phase: IntentPhase, body: [UInt8]) async throws(IntentTestingError)
        -> IntentTurn<I>
    {
        var phase = phase
        var body = body
        var ran: [String] = []
        var output: JobOutput
        while true {
            output = await context.runJob(intentType: I.intentType, phase: phase, body: body, on: provider)
            ran.append("\(phase) \(output.outcome)")
            guard output.outcome == .continue, let next = phase.next, !(phase == .confirm && confirmsBeforeHandle)
            else { break }
            body = output.body
            phase = next
        }
        let turn: IntentTurn<I>
        do {
            turn = try IntentTurn(phase: phase, output: output, sent: intent)
        } catch {
            transcript.entries.append(.init(said: said, ran: ran, answered: "(undecodable) \(error.message)"))
            throw error.with(asked: asked, transcript: transcript)
        }
        transcript.entries.append(.init(said: said, ran: ran, answered: turn.summary))
        turns.append(turn)
        intent = turn.intent
        lastBody = output.body
        return turn
    }

    // MARK: Questions

    /// What the last turn waits for.
    private enum Waiting: CustomStringConvertible {
        case notStarted
        /// The parameters whose resolution stopped the lifecycle.
        case parameters([(name: String, kind: ResolutionKind, detail: String)])
        /// A `ready` confirm waiting for ``IntentConversation/confirm()``.
        case confirmStep
        /// Nothing more: why.
        case ended(String)

        var description: String {
            switch self {
            case .notStarted: "nothing yet: the conversation was not sent"
            case .parameters(let unresolved):
                unresolved.map { "\($0.name): \($0.kind)\($0.detail)" }.joined(separator: "; ")
            case .confirmStep: "confirmation of the confirm step, which answered ready"
            case .ended(let why): "nothing: \(why)"
            }
        }
    }

    private var waiting: Waiting {
        guard let turn = turns.last else { return .notStarted }
        if let error = turn.error {
            return .ended("the conversation ended: \(turn.phase) ended \(turn.outcome) with \(error.code)")
        }
        switch turn.phase {
        case .resolve where turn.outcome == .stop:
            return .parameters(turn.unresolved.map { ($0.name, $0.kind, turn.detail(ofResolutionNamed: $0.name)) })
        case .confirm where turn.outcome == .continue:
            return .confirmStep
        case .confirm:
            let code = turn.confirm?.code.rawValue ?? "nothing"
            return .ended("the conversation ended: confirm answered \(code)")
        default:
            let code = turn.handle?.code.rawValue ?? "nothing"
            return .ended("the conversation ended: \(turn.phase) answered \(code)")
        }
    }

    /// The typed resolution of the parameter at `keyPath` in the last turn, when that turn stopped at resolve; else
    /// the error for an answer (`code` when the conversation waits for something else).
    private func askedResolution<Value: IntentParameterValue>(
        _ keyPath: WritableKeyPath<I, Value?>, code: IntentTestingError.Code, verb: String
    ) throws(IntentTestingError) -> (name: String, resolution: ResolutionResult<Value>) {
        let name: String
        do { name = try IntentTurn<I>.parameterName(keyPath) } catch {
            throw error.with(asked: asked, transcript: transcript)
        }
        switch waiting {
        case .notStarted:
            throw refusal(.notStarted, "cannot \(verb) \(name) before the conversation is sent", parameter: name)
        case .ended(let why):
            throw refusal(.conversationEnded, "cannot \(verb) \(name): \(why)", parameter: name)
        case .confirmStep:
            throw refusal(
                code, "cannot \(verb) \(name): the last turn asked to confirm the confirm step", parameter: name)
        case .parameters:
            guard let turn = turns.last else { preconditionFailure("a turn waits for parameters") }
            do { return (name, try turn.resolution(keyPath)) } catch {
                throw error.with(asked: asked, transcript: transcript)
            }
        }
    }

    /// An error about an answer, with what was asked and the transcript.
    private func refusal(_ code: IntentTestingError.Code, _ message: String, parameter: String? = nil)
        -> IntentTestingError
    {
        IntentTestingError(code: code, message: message, parameter: parameter, asked: asked, transcript: transcript)
    }
}

extension IntentConversation: CustomStringConvertible {
    /// The intent type, what the conversation waits for, and the transcript (what a failing expectation prints).
    public var description: String {
        var text = "IntentConversation<\(I.intentType)> asked: \(asked)"
        if !transcript.entries.isEmpty { text += "\ntranscript:\n\(transcript)" }
        return text
    }
}
