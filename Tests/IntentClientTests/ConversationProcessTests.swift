import ConciergeJSON
import ConciergeTestKit
import Foundation
import IntentClient
import Testing

/// Conversations end to end: the Swift client and `concierge send --converse` against a real broker and an example
/// worker process, sending only the answers.
@Suite(.serialized, .timeLimit(.minutes(1))) struct ConversationProcessTests {
    /// A broker and one example worker, and a client connected to them.
    func start() async throws -> (Cluster, ConciergeClient) {
        let cluster = try Cluster()
        try cluster.startBroker()
        try cluster.startWorker("w1")
        let client = try cluster.client()
        try await cluster.waitUntilServing(client, intent: "SendMessage")
        return (cluster, client)
    }

    static func sendMessage(to name: String, content: String? = "Running late") -> JSONValue {
        var parameters: JSONObject = ["recipient": ["displayName": .string(name)]]
        if let content { parameters["content"] = .string(content) }
        return ["type": "SendMessage", "parameters": .object(parameters)]
    }

    @Test func aTwoTurnDisambiguationCompletesBySendingOnlyTheChosenOption() async throws {
        let (cluster, client) = try await start()
        defer { cluster.stopAll() }
        let first = try await client.startConversation(intent: Self.sendMessage(to: "John"), id: "c-john")
        #expect(first.number == 1 && first.reply.phase == "resolve")
        #expect(first.state?.phase == .asking)
        #expect(first.asking.map(\.parameter) == ["recipient"])
        #expect(first.asking.first?.kind == "disambiguation")

        let second = try await first.conversation.choose("recipient", option: 0)
        #expect(second.number == 2 && second.reply.phase == "handle")
        #expect(second.interaction["handle"]?["code"] == "success")
        #expect(second.interaction["handle"]?["data"]?["recipient"] == "contact-john-appleseed")
        #expect(second.state?.ending == .completed)

        // The broker kept the intent, with the chosen contact written in.
        let state = try await client.conversation("c-john")
        #expect(state.isEnded && state.turn == 2 && state.ending == .completed)
        #expect(state.intent?["parameters"]?["recipient"]?["customIdentifier"] == "contact-john-appleseed")
    }

    @Test func aConfirmationRequestAndTheWholeIntentAreConfirmedByAnswersOnly() async throws {
        let (cluster, client) = try await start()
        defer { cluster.stopAll() }
        let payment: JSONValue = [
            "type": "SendPayment",
            "parameters": [
                "payee": ["displayName": "Kate"], "currencyAmount": ["amount": "20", "currencyCode": "EUR"],
            ],
        ]
        // "Kate": the favourite, Kate Bell, to be confirmed.
        let first = try await client.startConversation(intent: payment, flags: [.confirmBeforeHandle])
        #expect(first.asking.map(\.kind) == ["confirmationRequired"])
        #expect(first.interaction["resolve"]?["payee"]?["value"]?["displayName"] == "Kate Bell")

        // Yes to Kate Bell; confirm answers ready, and the conversation waits for a yes to the whole intent.
        let second = try await first.conversation.confirm("payee", true)
        #expect(second.isConfirming && second.reply.phase == "confirm")
        #expect(second.interaction["confirm"]?["code"] == "ready")
        #expect(second.interaction["handle"] == nil)

        let third = try await second.conversation.confirm(true)
        #expect(third.interaction["handle"]?["code"] == "success")
        #expect(third.state?.ending == .completed && third.number == 3)
    }

    @Test func refusedAnswersGetTheirCodesAndLeaveTheConversationAsItWas() async throws {
        let (cluster, client) = try await start()
        defer { cluster.stopAll() }
        let first = try await client.startConversation(intent: Self.sendMessage(to: "John"))
        let conversation = first.conversation
        for (answer, code) in [
            (ConversationAnswer.option(parameter: "recipient", index: 5), ClientError.Code.badOption),
            (.value(parameter: "content", "Hi"), .notAsked),
            (.confirmIntent(yes: true), .notAsked),
        ] {
            do {
                _ = try await conversation.send([answer])
                Issue.record("\(answer) was accepted")
            } catch let error as ClientError {
                #expect(error.code == code, "\(answer)")
            }
        }
        let state = try await conversation.read()
        #expect(state.turn == 1 && state.phase == .asking)
        let last = try await conversation.choose("recipient", option: 1)
        #expect(last.number == 2 && last.interaction["handle"]?["data"]?["recipient"] == "contact-john-doe")
        // An ended conversation refuses further turns.
        do {
            _ = try await conversation.choose("recipient", option: 0)
            Issue.record("a turn after the end was accepted")
        } catch let error as ClientError {
            #expect(error.code == .conversationEnded)
        }
    }

    @Test func endingAConversationCancelsItAndAnotherClientCannotSeeIt() async throws {
        let (cluster, client) = try await start()
        defer { cluster.stopAll() }
        let first = try await client.startConversation(intent: Self.sendMessage(to: "John"), id: "c-mine")
        let other = try cluster.client()
        defer { other.close() }
        do {
            _ = try await other.conversation("c-mine")
            Issue.record("another client read the conversation")
        } catch let error as ClientError {
            #expect(error.code == .unknownConversation)
        }
        let ended = try await first.conversation.end()
        #expect(ended.ending == .cancelled)
    }

    // MARK: concierge send --converse

    @Test func sendConverseWithScriptedAnswersSendsOnlyTheAnswers() async throws {
        let (cluster, client) = try await start()
        defer { cluster.stopAll() }
        client.close()
        let run = try runConcierge(
            [
                "send", "--broker", cluster.frontend, "--converse", "--conversation-id", "c-cli",
                "--answer", "recipient=option:0", "--answer", "content=Running late",
                Self.sendMessage(to: "John", content: nil).serializedString(),
            ], input: "")
        #expect(run.status == 0, "\(run.error)")
        let lines = run.output.split(separator: "\n").compactMap { try? JSONValue.parse(String($0)) }
        #expect(lines.count == 2)
        #expect(lines.first?["body"]?["conversation"]?["turn"] == 1)
        #expect(lines.last?["body"]?["handle"]?["code"] == "success")
        #expect(lines.last?["body"]?["conversation"]?["ending"] == "completed")
        #expect(
            run.error.contains("recipient: choose one of 0) John Appleseed <john.appleseed@example.com> 1) John Doe"))
        #expect(run.error.contains("content: needs a value"))
        #expect(run.error.contains("ended: completed after 2 turns"))
    }

    @Test func sendConverseReadsThePersonsAnswersFromStandardInput() async throws {
        let (cluster, client) = try await start()
        defer { cluster.stopAll() }
        client.close()
        // The broker asks recipient, then content (its `asking` order: the definition's). An empty line is asked
        // again; "1" picks John Doe; the text is the content, as a string.
        let run = try runConcierge(
            [
                "send", "--broker", cluster.frontend, "--converse",
                Self.sendMessage(to: "John", content: nil).serializedString(),
            ], input: "\n1\nRunning late\n")
        #expect(run.status == 0, "\(run.error)")
        let last = run.output.split(separator: "\n").last.flatMap { try? JSONValue.parse(String($0)) }
        #expect(last?["body"]?["handle"]?["data"]?["recipient"] == "contact-john-doe")
        #expect(last?["body"]?["intent"]?["parameters"]?["content"] == "Running late")
    }

    @Test func sendConverseEndsTheConversationWhenStandardInputCloses() async throws {
        let (cluster, client) = try await start()
        defer { cluster.stopAll() }
        client.close()
        let run = try runConcierge(
            [
                "send", "--broker", cluster.frontend, "--converse", "--conversation-id", "c-closed",
                Self.sendMessage(to: "John").serializedString(),
            ], input: "")
        #expect(run.status == 1)
        let last = run.output.split(separator: "\n").last.flatMap { try? JSONValue.parse(String($0)) }
        #expect(last?["conversation"]?["ending"] == "cancelled")
        #expect(run.error.contains("standard input closed"))
    }

    @Test func sendConverseSaysWhichParameterWasAskedTooOftenAndExitsOne() async throws {
        let (cluster, client) = try await start()
        defer { cluster.stopAll() }
        client.close()
        // Nobody is in the address book: recipient is unsupported every time, and a fourth ask ends it.
        let nobody = #"{"displayName": "Nobody"}"#
        let run = try runConcierge(
            [
                "send", "--broker", cluster.frontend, "--converse",
                Self.sendMessage(to: "Nobody").serializedString(),
            ], input: "\(nobody)\n\(nobody)\n\(nobody)\n\(nobody)\n")
        #expect(run.status == 1, "\(run.error)")
        #expect(run.error.contains("recipient: not supported (noContactFound); give another value"))
        #expect(run.error.contains("ended: too-many-asks (recipient asked more than 3 times) after 4 turns"))
        let last = run.output.split(separator: "\n").last.flatMap { try? JSONValue.parse(String($0)) }
        #expect(last?["status"] == "error" && last?["body"]?["code"] == "too-many-asks")
        #expect(last?["body"]?["parameter"] == "recipient")
    }

    @Test func sendConverseRefusesFlagsThatDoNotApply() throws {
        for arguments in [
            ["send", "--converse", "--phase", "resolve", #"{"type":"Echo"}"#],
            ["send", "--converse", "--idempotency-key", "k", #"{"type":"Echo"}"#],
            ["send", "--answer", "x=1", #"{"type":"Echo"}"#],
            ["send", "--converse", "--answer", "nothing", #"{"type":"Echo"}"#],
            ["send", "--converse", "--conversation-id", "has space", #"{"type":"Echo"}"#],
        ] {
            let run = try runConcierge(arguments, input: "")
            #expect(run.status == 64, "\(arguments): \(run.error)")
        }
    }

    /// Runs `concierge <arguments>` with `input` on its standard input (then closed), at most 60 s; returns its exit
    /// status, standard output and standard error.
    func runConcierge(_ arguments: [String], input: String) throws -> (status: Int32, output: String, error: String) {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("concierge-converse-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let outputURL = directory.appendingPathComponent("out")
        let errorURL = directory.appendingPathComponent("err")
        FileManager.default.createFile(atPath: outputURL.path, contents: nil)
        FileManager.default.createFile(atPath: errorURL.path, contents: nil)
        let process = Process()
        process.executableURL = Cluster.executable
        process.arguments = arguments
        let stdin = Pipe()
        process.standardInput = stdin
        process.standardOutput = try FileHandle(forWritingTo: outputURL)
        process.standardError = try FileHandle(forWritingTo: errorURL)
        try process.run()
        stdin.fileHandleForWriting.write(Data(input.utf8))
        try stdin.fileHandleForWriting.close()
        let end = Date().addingTimeInterval(60)
        while process.isRunning && Date() < end { usleep(20_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        return (
            process.terminationStatus, (try? String(contentsOf: outputURL, encoding: .utf8)) ?? "",
            (try? String(contentsOf: errorURL, encoding: .utf8)) ?? ""
        )
    }
}
