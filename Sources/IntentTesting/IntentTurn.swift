public import ConciergeJSON
public import IntentKit

/// The typed output of one turn: the last phase that ran, how it ended, and its results decoded as `I`'s types.
///
/// A turn decodes the Interaction body a handler's phase produced (`Schemas/PROTOCOL.md` section 11.2): the intent
/// with resolved values written back, one resolution per parameter, the confirm response and the handle response,
/// or the error of a phase that failed. Resolutions are read by key path, typed as the parameter's Swift type:
///
/// ```swift
/// let turn = try await conversation.send()
/// if case .disambiguation(let people) = try turn.resolution(\.recipient) {
///     #expect(people.map(\.displayName) == ["John Appleseed", "John Doe"])
/// }
/// #expect(try turn.resolution(\.content) == .success("Running late"))
/// #expect(turn.confirm?.code == .ready)
/// #expect(turn.handle?.data?["messageId"] != nil)
/// ```
///
/// Make one from any output with ``init(phase:output:sent:)`` (for example of ``HandlerProvider/run(_:phase:context:)``),
/// or get them from an ``IntentConversation``.
public struct IntentTurn<I: Intent>: Sendable {
    /// The last phase that ran (the one that stopped the lifecycle, or `handle`).
    public let phase: IntentPhase
    /// How that phase ended.
    public let outcome: JobOutcome
    /// The intent of the output, with resolved values written back; for an output that is an error, the intent
    /// that was sent.
    public let intent: I
    /// The confirm response, when a confirm phase ran.
    public let confirm: ConfirmResponse<I>?
    /// The handle response (with the default user activity when the handler gave none), when a handle phase ran.
    public let handle: HandleResponse<I>?
    /// The error of a phase that ended in ``JobOutcome/error`` or ``JobOutcome/cancelled`` (code, message and, for
    /// a bad parameter, its name).
    public let error: IntentError?
    /// The output body as JSON, for anything the typed accessors do not cover.
    public let json: JSONValue
    /// The resolution of every parameter, as JSON, by name; empty when no resolve phase ran.
    let resolutions: JSONObject

    /// Decodes the output of a phase of `I`.
    /// - Parameters:
    ///   - phase: The phase that produced `output`.
    ///   - output: The job's output.
    ///   - sent: The intent that was sent, kept as ``intent`` when the output is an error.
    /// - Throws: ``IntentTestingError`` with code ``IntentTestingError/Code/undecodable`` when the body is not an
    ///   Interaction (or error body) of `I`.
    public init(phase: IntentPhase, output: JobOutput, sent: I) throws(IntentTestingError) {
        let json: JSONValue
        do { json = try JSONValue.parse(output.body) } catch {
            throw _ResponseDecoding.undecodable("the \(phase) output is not JSON (\(error))")
        }
        self.phase = phase
        self.outcome = output.outcome
        self.json = json
        let body = try _ResponseDecoding.object(json, "the \(phase) output")
        switch output.outcome {
        case .error, .cancelled:
            self.intent = sent
            self.error = try _ResponseDecoding.error(json)
            self.resolutions = [:]
            self.confirm = nil
            self.handle = nil
        case .continue, .stop:
            guard let intentJSON = body["intent"] else {
                throw _ResponseDecoding.undecodable("the \(phase) output has no \"intent\"")
            }
            do { self.intent = try I(jsonValue: intentJSON) } catch {
                throw _ResponseDecoding.undecodable("the output's intent: \(error)", parameter: error.parameter)
            }
            self.error = nil
            self.resolutions =
                try body["resolve"].map { json throws(IntentTestingError) in
                    try _ResponseDecoding.object(json, "resolve")
                } ?? [:]
            self.confirm = try body["confirm"].map { json throws(IntentTestingError) in
                try _ResponseDecoding.confirmResponse(json, as: I.self)
            }
            self.handle = try body["handle"].map { json throws(IntentTestingError) in
                try _ResponseDecoding.handleResponse(json, as: I.self)
            }
        }
    }

    /// Decodes the result of ``HandlerProvider/runLifecycle(_:context:)``.
    /// - Throws: ``IntentTestingError`` with code ``IntentTestingError/Code/undecodable`` (see
    ///   ``init(phase:output:sent:)``).
    public init(_ result: LifecycleResult, sent: I) throws(IntentTestingError) {
        try self.init(phase: result.phase, output: result.output, sent: sent)
    }

    /// The resolution of the parameter stored at `keyPath`, with its value or options typed as the parameter's
    /// Swift type.
    /// - Throws: ``IntentTestingError`` with code ``IntentTestingError/Code/unknownParameter`` when no declared
    ///   parameter is stored there, ``IntentTestingError/Code/noResolution`` when the turn has no resolution for it,
    ///   ``IntentTestingError/Code/undecodable`` when the resolution does not decode.
    public func resolution<Value: IntentParameterValue>(_ keyPath: WritableKeyPath<I, Value?>)
        throws(IntentTestingError) -> ResolutionResult<Value>
    {
        try resolution(named: try Self.parameterName(keyPath), as: Value.self)
    }

    /// The resolution of the parameter named `name` on the wire, decoded as `Value`.
    /// - Throws: ``IntentTestingError`` (see ``resolution(_:)``; also ``IntentTestingError/Code/undecodable`` when
    ///   `Value` is not the parameter's type).
    public func resolution<Value: IntentParameterValue>(named name: String, as type: Value.Type = Value.self)
        throws(IntentTestingError) -> ResolutionResult<Value>
    {
        guard let parameter = I.parameter(named: name) else {
            throw IntentTestingError(
                code: .unknownParameter, message: "\(I.intentType) has no parameter \"\(name)\"", parameter: name)
        }
        guard parameter.type == Value.intentParameterType else {
            throw _ResponseDecoding.undecodable(
                "\(I.intentType).\(name) is of type \(parameter.type), not \(Value.intentParameterType)",
                parameter: name)
        }
        guard let json = resolutions[name] else {
            throw IntentTestingError(
                code: .noResolution,
                message: "the turn has no resolution of \(name): \(summary)",
                parameter: name
            )
        }
        do { return try ResolutionResult<Value>(jsonValue: json) } catch {
            throw _ResponseDecoding.undecodable("the resolution of \(name): \(error)", parameter: name)
        }
    }

    /// The kind of resolution of the parameter named `name`, or nil when the turn has none.
    public func resolutionKind(named name: String) -> ResolutionKind? {
        resolutions[name]?["kind"]?.stringValue.flatMap(ResolutionKind.init(rawValue:))
    }

    /// The kind of resolution of the parameter stored at `keyPath`, or nil when the turn has none (or no declared
    /// parameter is stored there).
    public func resolutionKind<Value: IntentParameterValue>(_ keyPath: WritableKeyPath<I, Value?>) -> ResolutionKind? {
        I.parameter(at: keyPath).flatMap { resolutionKind(named: $0.name) }
    }

    /// The parameters whose resolution stops the lifecycle (any kind but `success` and `notRequired`), with their
    /// kinds, in the order the intent declares them.
    public var unresolved: [(name: String, kind: ResolutionKind)] {
        I.parameters.compactMap { parameter in
            guard let kind = resolutionKind(named: parameter.name), !kind.isResolved else { return nil }
            return (parameter.name, kind)
        }
    }

    /// Whether every parameter resolved `success` or `notRequired` (false when no resolve phase ran).
    public var isResolved: Bool { !resolutions.isEmpty && unresolved.isEmpty }

    /// The wire name of the parameter stored at `keyPath`.
    static func parameterName(_ keyPath: AnyKeyPath) throws(IntentTestingError) -> String {
        guard let parameter = I.parameter(at: keyPath) else {
            throw IntentTestingError(
                code: .unknownParameter,
                message: "\(keyPath) is not a declared parameter of \(I.intentType)"
            )
        }
        return parameter.name
    }
}
