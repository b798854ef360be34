import ConciergeJSON

extension HandlerProvider {
    /// Runs one job: decodes the Interaction body, makes a fresh handler, runs the phase, encodes the Interaction out.
    ///
    /// The output body is the input Interaction with the (possibly updated) `"intent"` and the phase's result under
    /// `"resolve"`, `"confirm"` or `"handle"`; other keys of the input are kept. The outcome follows the worker
    /// outcome rule: resolve continues iff every parameter resolved `success` or `notRequired`; confirm continues iff
    /// the code is `ready`; handle stops. Never throws and never traps on bad input:
    /// - an unregistered intent type gives ``JobOutcome/error`` with `unknown-intent`;
    /// - invalid JSON, a wrong shape, an intent type other than `intentType`, an unknown parameter or a value of the
    ///   wrong type give ``JobOutcome/error`` with `bad-body` (the message names the parameter);
    /// - a throwing resolve gives ``JobOutcome/error`` with `handler-failed`; a throwing confirm or handle gives a
    ///   response with code `failure` and the error as `message` (outcome ``JobOutcome/stop``);
    /// - cancellation (`Schemas/PROTOCOL.md` section 5.13): when the task calling this is cancelled and the handler
    ///   ends by throwing `CancellationError` (or the task was cancelled before the handler was made), the output is
    ///   ``JobOutput/cancelled`` (outcome ``JobOutcome/cancelled``, error code `cancelled`). A handler that returns
    ///   despite the cancellation is answered with what it returned, and one that throws `CancellationError` while
    ///   its task is not cancelled fails as with any other error.
    /// - Parameters:
    ///   - intentType: The intent type of the job (frame F3 of the JOB).
    ///   - phase: The phase to run.
    ///   - body: The Interaction JSON.
    ///   - context: The job's context; its `phase` is set to `phase`.
    public func run(intentType: String, phase: IntentPhase, body: [UInt8], context: HandlerContext) async -> JobOutput {
        guard let registration = registrations[intentType] else {
            return JobOutput(
                error: IntentError(
                    code: .unknownIntent,
                    message: "no handler is registered for intent type \"\(intentType)\"",
                    intent: intentType
                )
            )
        }
        let interaction: _InteractionBody
        do {
            let (json, intentRange) = try JSONValue.parse(body, locatingMember: "intent")
            guard case .object(let object) = json else {
                return JobOutput(
                    error: IntentError(code: .badBody, message: "the body must be a JSON object, got \(json._kindName)")
                )
            }
            // One pass over the members finds whether a phase result is not an object (an Interaction has few
            // members); only then are they named in order.
            var phaseResultNotObject = false
            for (key, value) in object where key == "resolve" || key == "confirm" || key == "handle" {
                if case .object = value { continue }
                phaseResultNotObject = true
            }
            for key in ["resolve", "confirm", "handle"] where phaseResultNotObject {
                if let value = object[key], value.objectValue == nil {
                    return JobOutput(
                        error: IntentError(
                            code: .badBody, message: "\"\(key)\" must be an object, got \(value._kindName)",
                            intent: intentType
                        )
                    )
                }
            }
            interaction = _InteractionBody(bytes: body, members: object, intentRange: intentRange)
        } catch {
            return JobOutput(
                error: IntentError(
                    code: .badBody,
                    message: "the body is not valid JSON (\(error.code) at byte \(error.offset))"
                )
            )
        }
        var context = context
        context.phase = phase
        return await registration.run(phase, interaction, context)
    }
}
