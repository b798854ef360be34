import ConciergeJSON
import ConciergeTestKit
import ConciergeTop
import Foundation
import IntentClient
import IntentWire
import Testing

#if canImport(Glibc)
    import Glibc
#endif

extension EndToEnd {
    /// Conversations with real broker and worker processes (`Schemas/PROTOCOL.md` section 4.11): a journaled broker
    /// killed between turns, and the metrics that count each ending.
    @Suite(.serialized) struct ConversationTests {
        static let john: JSONValue = [
            "type": "SendMessage", "parameters": ["recipient": ["displayName": "John"], "content": "Running late"],
        ]
        static let nobody: JSONValue = [
            "type": "SendMessage", "parameters": ["recipient": ["displayName": "Nobody"], "content": "Hi"],
        ]

        @Test func aConversationSurvivesABrokerKilledBetweenItsTurns() async throws {
            let cluster = try Cluster()
            let journal = cluster.directory.appendingPathComponent("journal.sqlite").path
            let (client, _) = try await cluster.startJournaled(journal)
            let first = try await client.startConversation(
                intent: Self.john, id: "order-1", flags: [.confirmBeforeHandle])
            #expect(first.asking.first?.parameter == "recipient" && first.asking.first?.options.count == 2)
            cluster.signal("broker", SIGKILL)
            _ = await cluster.waitForExit("broker")
            cluster.signal("w1", SIGKILL)
            _ = await cluster.waitForExit("w1")
            try cluster.start(
                "broker-2",
                [
                    "broker", "--frontend", cluster.frontend, "--backend", cluster.backend, "--heartbeat-ms", "250",
                    "--journal", journal,
                ])
            try cluster.startWorker("w2", capacity: 4)
            try await cluster.waitUntilServing(client, intent: "SendMessage")
            // Only the answers: the broker kept the intent across its restart.
            let second = try await first.conversation.choose("recipient", option: 1)
            #expect(second.isConfirming)
            #expect(second.interaction["intent"]?["parameters"]?["recipient"]?["displayName"] == "John Doe")
            let last = try await second.conversation.confirm(true)
            #expect(last.reply.phase == "handle" && last.interaction["handle"]?["code"] == "success")
            #expect(last.state?.ending == .completed)
        }

        @Test func theMetricsCountEachEnding() async throws {
            let cluster = try Cluster()
            try cluster.startBroker(["--http", "127.0.0.1:0", "--conversation-ttl", "1"])
            let port = try await cluster.brokerHTTPPort()
            try cluster.startWorker("w1", capacity: 4)
            let client = try cluster.client()
            try await cluster.waitUntilServing(client, intent: "SendMessage")
            // completed
            let completed = try await client.startConversation(intent: Self.john)
            _ = try await completed.conversation.choose("recipient", option: 0)
            // declined
            let declined = try await client.startConversation(intent: Self.john, flags: [.confirmBeforeHandle])
            let waiting = try await declined.conversation.choose("recipient", option: 0)
            #expect(try await waiting.conversation.confirm(false).state?.ending == .declined)
            // cancelled
            let cancelled = try await client.startConversation(intent: Self.john)
            #expect(try await cancelled.conversation.end().ending == .cancelled)
            // too-many-asks: the same unknown contact, a fourth time
            var asked = try await client.startConversation(intent: Self.nobody)
            var code: ClientError.Code?
            for _ in 0..<3 where code == nil {
                do {
                    asked = try await asked.conversation.answer("recipient", value: ["displayName": "Nobody"])
                } catch let error as ClientError {
                    code = error.code
                }
            }
            #expect(code == .tooManyAsks)
            // expired: idle past its time to live (1 s)
            let idle = try await client.startConversation(intent: Self.john)
            try await waitUntil("the idle conversation expires") {
                try await idle.conversation.read().ending == .expired
            }
            var scrape = Scrape("")
            try await waitUntil("the broker counts every ending") {
                scrape = Scrape(try httpGet(port: port, "/metrics").body)
                return scrape.sum("concierge_conversations_ended_total") == 5
            }
            for ending in ["completed", "declined", "cancelled", "too-many-asks", "expired"] {
                #expect(
                    scrape.value("concierge_conversations_ended_total", ["intent": "SendMessage", "ending": ending])
                        == 1,
                    "\(ending)")
            }
            #expect(scrape.value("concierge_conversations_started_total", ["intent": "SendMessage"]) == 5)
            #expect(scrape.value("concierge_conversation_asks_total", ["parameter": "recipient"]) ?? 0 >= 6)
            #expect(scrape.sum("concierge_conversation_turns_count") == 5)
        }

        /// `concierge send --converse` asks in the order of the intent type's definition (SendMessage: `recipient`,
        /// then `content`; not the alphabetical order in which a worker writes its resolve output), so that answers
        /// piped in, one a line, land on the parameters they were written for.
        @Test func sendConverseAsksInTheDefinitionsParameterOrderSoPipedAnswersLandRight() async throws {
            let cluster = try Cluster()
            try cluster.startBroker()
            try cluster.startWorker("w1", capacity: 4)
            let client = try cluster.client()
            try await cluster.waitUntilServing(client, intent: "SendMessage")
            client.close()
            let input = cluster.directory.appendingPathComponent("answers")
            try Data("{\"displayName\": \"John Appleseed\"}\nRunning late\n".utf8).write(to: input)
            let process = Process()
            process.executableURL = Cluster.executable
            process.arguments = [
                "send", "--broker", cluster.frontend, "--converse", #"{"type": "SendMessage", "parameters": {}}"#,
            ]
            process.standardInput = try FileHandle(forReadingFrom: input)
            let output = Pipe()
            let errors = Pipe()
            process.standardOutput = output
            process.standardError = errors
            try process.run()
            let printed = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            let said = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            #expect(process.terminationStatus == 0, "\(said)")
            let recipient = try #require(said.range(of: "recipient: needs a value"), "\(said)")
            let content = try #require(said.range(of: "content: needs a value"), "\(said)")
            #expect(recipient.lowerBound < content.lowerBound, "asked in the definition's order: \(said)")
            let last = printed.split(separator: "\n").last.flatMap { try? JSONValue.parse(String($0)) }
            #expect(last?["body"]?["handle"]?["code"] == "success", "\(printed)")
            #expect(last?["body"]?["handle"]?["data"]?["recipient"] == "contact-john-appleseed")
            #expect(last?["body"]?["intent"]?["parameters"]?["content"] == "Running late")
        }
    }
}
