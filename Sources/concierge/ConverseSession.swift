import ArgumentParser
import ConciergeJSON
import Foundation
import IntentClient
import IntentWire

/// `concierge send --converse`: a conversation at the terminal. Starts it with the intent, then at each turn says
/// what the broker asks (on standard error), takes the answers (an `--answer` given for the parameter, else a line of
/// standard input), and sends only the answers, until the conversation ends. Every turn's ending is printed as one
/// JSON line on standard output, as `concierge send` prints a reply; standard input closing ends the conversation
/// (END).
struct ConverseSession {
    let client: ConciergeClient
    let conversationID: String
    /// Answers given in advance (`--answer`), each used once, in order, for the first ask that matches.
    var scripted: [ConversationAnswer]
    let deadline: Duration?
    let retry: RetryPolicy

    /// Runs the conversation; returns the exit status: 0 when it ends `completed`, 1 when it ends otherwise (or a
    /// turn ends in an error that ends it, or standard input closed and the conversation was ended), 2 when the
    /// client fails (no broker), 3 when the broker restarted and lost the turn.
    mutating func run(intentType: String, body: [UInt8], flags: ConversationFlags) async -> Int32 {
        var turn: ConversationTurn
        do {
            turn = try await client.startConversation(
                intentType: intentType, body: body, id: conversationID, flags: flags, deadline: deadline,
                retry: retry, progress: { Self.printReply($0) })
        } catch {
            return Self.report(error)
        }
        while true {
            Self.printReply(turn.reply)
            if let state = turn.state, state.isEnded {
                Self.say("conversation \(conversationID) ended: \(Self.describeEnding(state))")
                return state.ending == .completed ? 0 : 1
            }
            guard let answers = await answers(to: turn) else {
                return await end(because: "standard input closed")
            }
            if answers.isEmpty {
                return await end(
                    because: "the conversation asks nothing (state \(turn.state?.phase.rawValue ?? "unknown"))")
            }
            do {
                turn = try await turn.conversation.send(
                    answers, deadline: deadline, retry: retry, progress: { Self.printReply($0) })
            } catch let error as ClientError where error.reply != nil {
                if let reply = error.reply { Self.printReply(reply) }
                if let state = error.conversation, state.isEnded {
                    Self.say("conversation \(conversationID) ended: \(Self.describeEnding(state))")
                    return 1
                }
                if error.code == .unknownConversation || error.code == .conversationEnded { return 1 }
                // A refused answer (not-asked, bad-option, a worker's invalid-type): the conversation is as it was;
                // ask again.
                Self.say("\(error.code): \(error.message); answer again")
            } catch {
                return Self.report(error)
            }
        }
    }

    /// The answers to what `turn` asks, from `--answer` or standard input; nil when standard input closed, empty
    /// when the turn asks nothing.
    private mutating func answers(to turn: ConversationTurn) async -> [ConversationAnswer]? {
        if turn.isConfirming {
            let question =
                "Ready to handle \(turn.state?.intentType ?? "the intent")?\(Self.confirmDetails(turn)) [y/n]"
            if let index = scripted.firstIndex(where: { $0.parameter == nil }) {
                let answer = scripted.remove(at: index)
                Self.say("\(question) \(Self.describe(answer)) (--answer)")
                return [answer]
            }
            while true {
                Self.prompt(question)
                guard let line = await Self.readLine() else { return nil }
                if let yes = ScriptedAnswer.yesNo(line) { return [.confirmIntent(yes: yes)] }
                Self.say("answer y or n")
            }
        }
        var answers: [ConversationAnswer] = []
        for ask in turn.asking {
            let resolution = turn.interaction["resolve"]?[ask.parameter]
            let question = Self.question(ask, resolution: resolution)
            if let index = scripted.firstIndex(where: { $0.parameter == ask.parameter }) {
                let answer = scripted.remove(at: index)
                Self.say("\(question) \(Self.describe(answer)) (--answer)")
                answers.append(answer)
                continue
            }
            while true {
                Self.prompt(question)
                guard let line = await Self.readLine() else { return nil }
                if let answer = Self.answer(line, to: ask) {
                    answers.append(answer)
                    break
                }
            }
        }
        return answers
    }

    /// Ends the conversation (END) and prints it as it ended (`{"conversation": {...}}`); exit status 1.
    private func end(because reason: String) async -> Int32 {
        do {
            let state = try await client.endConversation(conversationID)
            Self.printLine(["conversation": state.json])
            Self.say("\(reason): conversation \(conversationID) ended: \(Self.describeEnding(state))")
        } catch {
            Self.say("\(reason); ending conversation \(conversationID) failed: \(error)")
        }
        return 1
    }

    // MARK: Questions and answers

    /// What the broker asks about one parameter, in words.
    static func question(_ ask: ConversationState.Ask, resolution: JSONValue?) -> String {
        let options = ask.options.isEmpty ? (resolution?["options"]?.arrayValue ?? []) : ask.options
        switch ask.kind {
        case "disambiguation":
            let list = options.enumerated().map { "\($0.offset)) \(label($0.element))" }.joined(separator: " ")
            return "\(ask.parameter): choose one of \(list)"
        case "confirmationRequired":
            let value = ask.value ?? resolution?["value"]
            return "\(ask.parameter): confirm \(value.map(label) ?? "the value")? [y/n]"
        case "unsupported":
            let reason = ask.reason ?? resolution?["reason"]?.stringValue
            return "\(ask.parameter): not supported\(reason.map { " (\($0))" } ?? ""); give another value"
        default:
            return "\(ask.parameter): needs a value"
        }
    }

    /// A line typed in answer to `ask`: an option number for a disambiguation, y/n for a confirmation request, else
    /// a value (JSON, else the text as a string); nil for an empty line.
    static func answer(_ line: String, to ask: ConversationState.Ask) -> ConversationAnswer? {
        let text = line.trimmingBlanks()
        guard !text.isEmpty else { return nil }
        if ask.kind == "disambiguation", let index = Int(text), index >= 0 {
            return .option(parameter: ask.parameter, index: index)
        }
        if ask.kind == "confirmationRequired", let yes = ScriptedAnswer.yesNo(text) {
            return .confirmParameter(parameter: ask.parameter, yes: yes)
        }
        return .value(parameter: ask.parameter, ScriptedAnswer.value(text))
    }

    /// A value as a person reads it: a person's name and handle, a place's name, a string without quotes
    /// (in quotes for a confirmation), else its JSON.
    static func label(_ value: JSONValue) -> String {
        if let name = value["displayName"]?.stringValue {
            return value["handle"]?.stringValue.map { "\(name) <\($0)>" } ?? name
        }
        if let name = value["name"]?.stringValue ?? value["address"]?.stringValue { return name }
        if let amount = value["amount"]?.stringValue, let code = value["currencyCode"]?.stringValue {
            return "\(amount) \(code)"
        }
        if let text = value.stringValue { return "\"\(text)\"" }
        return value.serializedString()
    }

    /// The confirm response's data, to show with the whole-intent question.
    static func confirmDetails(_ turn: ConversationTurn) -> String {
        guard let data = turn.interaction["confirm"]?["data"]?.objectValue, !data.isEmpty else { return "" }
        return " (" + data.map { "\($0.key): \(label($0.value))" }.joined(separator: ", ") + ")"
    }

    static func describe(_ answer: ConversationAnswer) -> String {
        switch answer {
        case .value(_, let value): value.serializedString()
        case .option(_, let index): "\(index)"
        case .confirmParameter(_, let yes), .confirmIntent(let yes): yes ? "y" : "n"
        }
    }

    static func describeEnding(_ state: ConversationState) -> String {
        var text = state.ending?.rawValue ?? "ended"
        if let parameter = state.endingParameter { text += " (\(parameter) asked more than \(state.maxAsks) times)" }
        if let code = state.endingCode { text += " (\(code))" }
        return text + " after \(state.turn) turn\(state.turn == 1 ? "" : "s")"
    }

    // MARK: Terminal

    /// One line of standard input (without its line end) read on a thread of its own, so that no task thread
    /// blocks; nil at its end.
    static func readLine() async -> String? {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread { continuation.resume(returning: Swift.readLine(strippingNewline: true)) }
        }
    }

    static func prompt(_ question: String) {
        FileHandle.standardError.write(Data("\(question)\n> ".utf8))
    }

    static func say(_ text: String) {
        FileHandle.standardError.write(Data("\(text)\n".utf8))
    }

    static func printReply(_ reply: Reply) {
        var fields: JSONObject = [
            "request_id": .string(reply.requestID), "status": .string(reply.status.rawValue),
            "phase": .string(reply.phase),
            "body": reply.json ?? .string(String(decoding: reply.body, as: UTF8.self)),
        ]
        if reply.isReplay { fields["replay"] = true }
        printLine(fields)
    }

    static func printLine(_ fields: JSONObject) {
        FileHandle.standardOutput.write(Data((JSONValue.object(fields).serializedString() + "\n").utf8))
    }

    /// Reports a client failure on standard error; returns the exit status (2, or 3 for a restarted broker).
    static func report(_ error: any Error) -> Int32 {
        if let error = error as? ClientError, let reply = error.reply {
            printReply(reply)
            return 1
        }
        say("concierge send: \(error)")
        if let error = error as? ClientError, error.code == .brokerRestarted { return 3 }
        return 2
    }
}
