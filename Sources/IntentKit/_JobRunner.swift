import ConciergeJSON

/// Runs one phase of one job for handler type `H` (the generic half of ``HandlerProvider/run``).
///
/// Cancellation (section 5.13): a job whose task is cancelled before its handler is made stops at once, and a
/// handler that ends by throwing `CancellationError` while the task is cancelled gives ``JobOutcome/cancelled``
/// (``JobOutput/cancelled``), whatever the phase. A `CancellationError` thrown by a handler whose task is not
/// cancelled is a failure like any other error, and a handler that returns despite the cancellation is answered
/// with what it returned.
enum _JobRunner<H: IntentHandler> {
    typealias I = H.Intent

    /// - Parameter parameterNames: The names of `H.Intent`'s parameters, in order (see
    ///   ``Intent/init(jsonValue:parameterNames:)``).
    static func run(
        factory: @Sendable () -> H,
        parameterNames: [String],
        phase: IntentPhase,
        body: _InteractionBody,
        context: HandlerContext
    ) async -> JobOutput {
        guard var intentJSON = body.members["intent"] else {
            return JobOutput(error: IntentError(code: .badBody, message: "the body has no \"intent\""))
        }
        let intent: I
        do {
            intent = try I(jsonValue: intentJSON, parameterNames: parameterNames)
        } catch {
            return JobOutput(error: error)
        }
        var body = body
        if case .object(var object) = intentJSON {
            // Whether the output's intent differs from the input's (a flag, not a comparison of the two objects,
            // which would hash every key and compare every value again on each job).
            var changed = true
            switch object["parameters"] {
            case .object(let parameters) where parameters.contains(where: { $0.value == .null }):
                // A null parameter is an absent one: the output's intent leaves it out (PROTOCOL.md 11.3).
                object["parameters"] = .object(parameters.filter { $0.value != .null })
            case .object:
                changed = false
            default:
                // No parameters (or null): the output's intent carries an empty object, which the Intent schema
                // (Schemas/json/interaction.schema.json) requires.
                object["parameters"] = .object([:])
            }
            if changed {
                intentJSON = .object(object)
                body = body.replacingIntent(intentJSON)
            }
        }
        let interaction = body.members
        // Required parameters hold (section 5.11, step 4b): confirm and handle of an intent that lacks one end here,
        // before any handler code runs (a handler may rely on them being there).
        if phase == .confirm || phase == .handle, let missing = missingRequiredParameter(in: intentJSON) {
            return JobOutput(
                error: IntentError(
                    code: .missingParameter,
                    message:
                        "\(I.intentType) requires \"\(missing)\", which the intent does not have: resolve it first "
                        + "(a resolve asks for it with needsValue)",
                    parameter: missing, intent: I.intentType))
        }
        // Cancelled before the handler started (the broker cancelled the job while it waited to run): nothing has
        // been done, so the job stops without running the handler at all.
        if Task.isCancelled { return JobOutput.cancelled }
        let handler = factory()
        var output = interaction
        switch phase {
        case .resolve:
            let resolutions: Resolutions<I>
            do {
                resolutions = try await handler.resolve(intent: intent, context: context)
            } catch is CancellationError where Task.isCancelled {
                return JobOutput.cancelled
            } catch {
                return JobOutput(
                    error: IntentError(code: .handlerFailed, message: "resolve failed: \(describe(error))")
                )
            }
            if let first = resolutions.undeclared.first {
                return JobOutput(
                    error: IntentError(
                        code: .handlerFailed,
                        message:
                            "resolve set a resolution for \(first), which is not a declared parameter of \(I.intentType)"
                    )
                )
            }
            return resolve(
                intent: intent,
                intentJSON: intentJSON,
                resolutions: resolutions,
                body: body,
                output: &output
            )
        case .confirm:
            let response: JSONValue
            let outcome: JobOutcome
            do {
                let confirmed = try await handler.confirm(intent: intent, context: context)
                if I.confirmCodes.contains(confirmed.code) {
                    response = confirmed.jsonValue
                    outcome = confirmed.code == .ready ? .continue : .stop
                } else {
                    response = failure(
                        "the handler answered confirm code \"\(confirmed.code)\", which \(I.intentType) does not declare"
                    )
                    outcome = .stop
                }
            } catch is CancellationError where Task.isCancelled {
                return JobOutput.cancelled
            } catch {
                response = failure(describe(error))
                outcome = .stop
            }
            if let spliced = body.appending("confirm", writeValue: { response.write(into: &$0) }) {
                return JobOutput(outcome: outcome, body: spliced)
            }
            output["confirm"] = response
            return JobOutput(outcome: outcome, body: JSONValue.object(output).serialized())
        case .handle:
            var response: HandleResponse<I>
            do {
                response = try await handler.handle(intent: intent, context: context)
                if !I.handleCodes.contains(response.code) {
                    response = HandleResponse(
                        code: .failure,
                        message:
                            "the handler answered handle code \"\(response.code)\", which \(I.intentType) does not declare"
                    )
                }
            } catch is CancellationError where Task.isCancelled {
                return JobOutput.cancelled
            } catch {
                response = HandleResponse(code: .failure, message: describe(error))
            }
            let handled = response
            if let range = body.intentRange, handled.userActivity == nil,
                let spliced = body.appending(
                    "handle",
                    // The default activity repeats the intent, and the handler's data (often the intent's values)
                    // is written twice: room for that in one allocation.
                    valueCapacity: 3 * range.count + 512,
                    writeValue: { handled.writeWithDefaultActivity(intent: body.bytes[range], into: &$0) }
                )
            {
                return JobOutput(outcome: .stop, body: spliced)
            }
            output["handle"] = response.jsonValue(intent: intentJSON)
            return JobOutput(outcome: .stop, body: JSONValue.object(output).serialized())
        case .lifecycle:
            // A JOB never carries it (PROTOCOL.md 5.12, W5); the phases of a lifecycle run one by one.
            return JobOutput(
                error: IntentError(code: .malformed, message: "a job runs resolve, confirm or handle, not lifecycle")
            )
        }
    }

    /// Builds the resolve output: every declared parameter gets a resolution (the handler's, or the default), and
    /// resolved values are written back into the intent's parameters.
    private static func resolve(
        intent: I,
        intentJSON: JSONValue,
        resolutions: Resolutions<I>,
        body: _InteractionBody,
        output: inout JSONObject
    ) -> JobOutput {
        var intentObject = intentJSON.objectValue ?? [:]
        var parameters = intentObject["parameters"]?.objectValue ?? [:]
        var results: JSONObject = [:]
        var allResolved = true
        var wroteBack = false
        for parameter in I.parameters {
            if let entry = resolutions.entries[parameter.name] {
                results[parameter.name] = entry.json
                allResolved = allResolved && entry.kind.isResolved
                if let value = entry.resolvedValue, parameters[parameter.name] != value {
                    parameters[parameter.name] = value
                    wroteBack = true
                }
            } else if let value = parameter.value(in: intent) {
                results[parameter.name] = .object(["kind": "success", "value": value])
            } else if parameter.isRequired {
                // A required parameter that is missing needs a value, unless the handler said otherwise.
                results[parameter.name] = .object(["kind": "needsValue"])
                allResolved = false
            } else {
                results[parameter.name] = .object(["kind": "notRequired"])
            }
        }
        let outcome: JobOutcome = allResolved ? .continue : .stop
        if !wroteBack,
            let spliced = body.appending("resolve", writeValue: { JSONValue.object(results).write(into: &$0) })
        {
            return JobOutput(outcome: outcome, body: spliced)
        }
        if wroteBack {
            intentObject["parameters"] = .object(parameters)
            output["intent"] = .object(intentObject)
        }
        output["resolve"] = .object(results)
        return JobOutput(outcome: outcome, body: JSONValue.object(output).serialized())
    }

    /// The first required parameter of `I` that the intent's JSON lacks (absent or null), if any.
    private static func missingRequiredParameter(in intentJSON: JSONValue) -> String? {
        let parameters = intentJSON.objectValue?["parameters"]?.objectValue
        for parameter in I.parameters where parameter.isRequired {
            guard let value = parameters?[parameter.name], value != .null else { return parameter.name }
        }
        return nil
    }

    private static func failure(_ message: String) -> JSONValue {
        .object(["code": .string(ConfirmCode.failure.rawValue), "message": .string(message)])
    }

    private static func describe(_ error: any Error) -> String {
        let text = String(describing: error)
        return text.isEmpty ? "\(type(of: error))" : text
    }
}
