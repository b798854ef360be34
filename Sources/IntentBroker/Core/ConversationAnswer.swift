import ConciergeJSON
import IntentWire

/// One answer of a conversation turn's body (`Schemas/PROTOCOL.md` section 4.11): a value for a parameter, the
/// choice of one option of its disambiguation, yes or no to a value that needs confirmation, or yes or no to the
/// whole intent.
enum ConversationAnswer: Equatable {
    case value(parameter: String, JSONValue)
    /// Option `index` of the parameter's disambiguation; `index` is nil for an integer too large for `Int` (2^63 or
    /// more, e.g. `1e30`), which no list of options has.
    case option(parameter: String, index: Int?)
    case confirmParameter(parameter: String, yes: Bool)
    case confirmIntent(yes: Bool)

    /// The most answers one turn may carry.
    static var maxAnswers: Int { 16 }

    /// Parses a turn's body: one Answer object, or `{"answers": [Answer, ...]}`.
    /// - Throws: ``ConversationRefusal`` with `bad-answer` saying what is wrong.
    static func parse(_ body: [UInt8]) throws(ConversationRefusal) -> [ConversationAnswer] {
        let json: JSONValue
        do { json = try JSONValue.parse(body) } catch {
            throw ConversationRefusal(.badAnswer, "the answer is not JSON: \(error)")
        }
        guard case .object(let object) = json else {
            throw ConversationRefusal(.badAnswer, "the answer must be a JSON object")
        }
        if let list = object["answers"] {
            guard object.count == 1, case .array(let items) = list, (1...maxAnswers).contains(items.count) else {
                throw ConversationRefusal(
                    .badAnswer, "\"answers\" must be the only key, an array of 1 to \(maxAnswers) answers")
            }
            var answers: [ConversationAnswer] = []
            for item in items {
                guard case .object(let answer) = item else {
                    throw ConversationRefusal(.badAnswer, "each of \"answers\" must be an answer object")
                }
                answers.append(try parse(answer))
            }
            return answers
        }
        return [try parse(object)]
    }

    private static func parse(_ object: JSONObject) throws(ConversationRefusal) -> ConversationAnswer {
        let shapes =
            "an answer is {\"parameter\": name, \"value\": v}, {\"parameter\": name, \"option\": index}, "
            + "{\"parameter\": name, \"confirm\": true|false} or {\"confirm\": true|false}"
        guard let parameterValue = object["parameter"] else {
            guard object.count == 1, case .bool(let yes)? = object["confirm"] else {
                throw ConversationRefusal(.badAnswer, shapes)
            }
            return .confirmIntent(yes: yes)
        }
        guard case .string(let parameter) = parameterValue, !parameter.isEmpty, object.count == 2 else {
            throw ConversationRefusal(.badAnswer, shapes)
        }
        if let value = object["value"] { return .value(parameter: parameter, value) }
        if let option = object["option"] {
            guard let index = optionIndex(option) else {
                throw ConversationRefusal(.badAnswer, "\"option\" must be an integer from 0")
            }
            return .option(parameter: parameter, index: index)
        }
        if case .bool(let yes)? = object["confirm"] { return .confirmParameter(parameter: parameter, yes: yes) }
        throw ConversationRefusal(.badAnswer, shapes)
    }

    /// An `option` that is an integer from 0 (JSON Schema's `"type": "integer", "minimum": 0`: any number without a
    /// fraction, however written: `2`, `2.0`, `1e30`): `.some(index)`, with a nil index when it is 2^63 or more;
    /// nil for anything else (a negative number, a fraction, a string ...), which is not an Answer.
    private static func optionIndex(_ option: JSONValue) -> Int?? {
        switch option {
        case .int(let index):
            guard index >= 0 else { return nil }
            return .some(Int(index))
        case .double(let number):
            guard number.isFinite, number >= 0, number == number.rounded(.towardZero) else { return nil }
            return .some(number < 0x1p63 ? Int(number) : nil)
        default:
            return nil
        }
    }
}

/// Why the broker refuses a conversation turn, CONVERSATION or END: a code of section 10.2 and a message. A refused
/// turn changes nothing.
struct ConversationRefusal: Error {
    let code: WireErrorCode
    let message: String

    init(_ code: WireErrorCode, _ message: String) {
        self.code = code
        self.message = message
    }
}

extension Conversation {
    /// What a turn of answers makes the broker do.
    enum Plan: Equatable {
        /// Run the lifecycle from resolve on this body (`{"intent": ...}` with the answers written in).
        case resolve(body: [UInt8])
        /// Run handle on the stored confirm output.
        case handle(body: [UInt8])
        /// The caller said no to the whole intent: the conversation ends `declined`.
        case decline
    }

    /// What `answers` make of the conversation as it waits now (``state`` `asking` or `confirming`).
    /// - Throws: ``ConversationRefusal`` with `not-asked` or `bad-option`.
    func plan(_ answers: [ConversationAnswer]) throws(ConversationRefusal) -> Plan {
        if state == .confirming {
            guard answers.count == 1, case .confirmIntent(let yes) = answers[0] else {
                throw ConversationRefusal(
                    .notAsked,
                    "the conversation waits for the confirmation of the whole intent: {\"confirm\": true|false}")
            }
            guard yes else { return .decline }
            return .handle(body: confirmOutput ?? [])
        }
        var parameters = intent["parameters"]?.objectValue ?? [:]
        for answer in answers {
            switch answer {
            case .confirmIntent:
                throw ConversationRefusal(
                    .notAsked, "nothing waits for the confirmation of the whole intent: " + askedText)
            case .value(let parameter, let value):
                _ = try asked(parameter)
                if value.isNull {
                    _ = parameters.removeValue(forKey: parameter)
                } else {
                    _ = parameters.updateValue(value, forKey: parameter)
                }
            case .option(let parameter, let index):
                let asked = try asked(parameter)
                guard asked.kind == "disambiguation" else {
                    throw ConversationRefusal(
                        .notAsked, "\(parameter) is asked \(asked.kind), not to choose among options")
                }
                guard let index, asked.options.indices.contains(index) else {
                    let option = index.map { "option \($0)" } ?? "an option of 2^63 or more"
                    throw ConversationRefusal(
                        .badOption,
                        "\(parameter) has \(asked.options.count) options (0 to \(asked.options.count - 1)), not \(option)"
                    )
                }
                _ = parameters.updateValue(asked.options[index], forKey: parameter)
            case .confirmParameter(let parameter, let yes):
                let asked = try asked(parameter)
                guard asked.kind == "confirmationRequired" else {
                    throw ConversationRefusal(.notAsked, "\(parameter) is asked \(asked.kind), not to confirm a value")
                }
                // Yes keeps the value the handler wrote back into the intent; no takes it out (asked again).
                if !yes { _ = parameters.removeValue(forKey: parameter) }
            }
        }
        var intent = self.intent.objectValue ?? [:]
        intent["parameters"] = .object(parameters)
        return .resolve(body: JSONValue.object(["intent": .object(intent)]).serialized())
    }

    /// The parameter asked about under that name.
    private func asked(_ parameter: String) throws(ConversationRefusal) -> Asked {
        guard let asked = asking.first(where: { $0.parameter == parameter }) else {
            throw ConversationRefusal(.notAsked, "the conversation does not ask about \(parameter): " + askedText)
        }
        return asked
    }

    /// What the conversation asks, in words, for refusals.
    var askedText: String {
        switch state {
        case .confirming: return "it waits for {\"confirm\": true|false}"
        case .asking:
            guard !asking.isEmpty else { return "it asks about nothing" }
            return "it asks about " + asking.map { "\($0.parameter) (\($0.kind))" }.joined(separator: ", ")
        case .running: return "a turn is in flight"
        case .ended: return "it ended"
        }
    }

    /// The parameters a resolve output asks about: those resolved `needsValue`, `disambiguation`,
    /// `confirmationRequired` or `unsupported`, in the order of `order` (the served definition's parameters), then
    /// any that `order` does not name in the output's order.
    ///
    /// A worker's output lists its resolutions by name (serialized with sorted keys), so the definition, not the
    /// output, says in which order a person is asked: a client that asks one question after another then asks as the
    /// definition reads.
    static func askedParameters(inResolve resolve: JSONObject, order: [String] = []) -> [Asked] {
        var asked: [Asked] = []
        for (name, resolution) in resolve {
            guard case .string(let kind)? = resolution["kind"],
                ["needsValue", "disambiguation", "confirmationRequired", "unsupported"].contains(kind)
            else { continue }
            asked.append(Asked(parameter: name, kind: kind, options: resolution["options"]?.arrayValue ?? []))
        }
        guard !order.isEmpty, asked.count > 1 else { return asked }
        let ranked = asked.enumerated().map { (rank: order.firstIndex(of: $0.element.parameter) ?? order.count, $0) }
        return ranked.sorted { ($0.rank, $0.1.offset) < ($1.rank, $1.1.offset) }.map(\.1.element)
    }
}
