import ConciergeJSON
import ConciergeTestKit
import Foundation
import IntentClient
import IntentWire
import Testing

extension EndToEnd {
    /// A broker with a SQLite journal (`Docs/JOURNAL.md`), killed with SIGKILL and started again on the
    /// same journal: what it accepted is finished, and what it answered is still known to STATUS.
    @Suite(.serialized) struct DurableBrokerTests {
        @Test func aKilledBrokerRestartedOnItsJournalFinishesWhatItAcceptedAndRemembersWhatItAnswered() async throws {
            let cluster = try Cluster()
            let journal = cluster.directory.appendingPathComponent("journal.sqlite").path
            let flags = ["--journal", journal, "--hard-limit-ms", "60000"]
            // Answered before the crash: kept for STATUS.
            let (client, done) = try await cluster.startJournaled(journal)
            #expect(done.status == .final)
            // In flight at the crash: a resolve running (it runs again), confirms queued behind it (they run), and
            // nothing of the handle phase.
            let running = client.send(
                intent: delayedEcho("slow", delayMs: 2000, in: "resolve"), phase: .resolve, deadline: .seconds(30),
                requestID: "running")
            try await client.waitUntilRunning("running", on: "w1")
            var queued: [ConciergeClient.ReplyStream] = []
            for index in 0..<5 {
                queued.append(
                    client.send(
                        intent: delayedEcho("q\(index)"), phase: .confirm, deadline: .seconds(30),
                        requestID: "q\(index)"))
            }
            for index in 0..<5 {
                let status = try await client.status(of: "q\(index)")
                #expect(status.status == .progress, "q\(index) is accepted (and journaled) before STATUS answers")
            }
            cluster.signal("broker", SIGKILL)
            _ = await cluster.waitForExit("broker")
            cluster.signal("w1", SIGKILL)  // gone with the broker: its registration was the old broker's
            _ = await cluster.waitForExit("w1")
            try cluster.start(
                "broker-2",
                [
                    "broker", "--frontend", cluster.frontend, "--backend", cluster.backend,
                    "--heartbeat-ms", "250",
                ] + flags)
            try cluster.startWorker("w2", capacity: 8)
            for (index, stream) in queued.enumerated() {
                let ending = try #require(try await Cluster.replies(stream).last)
                #expect(ending.status == .final, "q\(index): \(ending.errorCode ?? "")")
            }
            // The resolve that was running runs again from its request.
            let rerun = try #require(try await Cluster.replies(running).last)
            #expect(rerun.status == .final, "\(rerun.errorCode ?? "")")
            let stored = try await client.status(of: "done")
            #expect(stored.status == .final && stored.body == done.body)
        }

        /// A broker refuses a journal it cannot trust, naming the file and what to do, and never starts afresh
        /// over it: a missing file, a file that is not a journal, a truncated one, one another broker holds.
        @Test func aBrokerRefusesAJournalThatIsMissingCorruptOrInUse() async throws {
            let cluster = try Cluster()
            let directory = cluster.directory.path
            func start(_ journal: String) throws -> (status: Int32, output: String, error: String) {
                try runConcierge([
                    "broker", "--frontend", "ipc://\(directory)/f-\(UInt32.random(in: 0...UInt32.max))",
                    "--backend", "ipc://\(directory)/b-\(UInt32.random(in: 0...UInt32.max))", "--journal", journal,
                ])
            }
            let missing = try start("\(directory)/nowhere.sqlite")
            #expect(missing.status != 0)
            #expect(missing.error.contains("journal-missing") && missing.error.contains("nowhere.sqlite"))
            #expect(missing.error.contains("concierge journal init"))
            #expect(!FileManager.default.fileExists(atPath: "\(directory)/nowhere.sqlite"))  // not created

            let garbage = "\(directory)/garbage.sqlite"
            FileManager.default.createFile(atPath: garbage, contents: Data((0..<8192).map { UInt8($0 % 251) }))
            let corrupt = try start(garbage)
            #expect(corrupt.status != 0)
            #expect(corrupt.error.contains("journal-corrupt") && corrupt.error.contains("garbage.sqlite"))
            #expect(try Data(contentsOf: URL(fileURLWithPath: garbage)).count == 8192)  // left as it was

            let journal = "\(directory)/journal.sqlite"
            #expect(try runConcierge(["journal", "init", journal]).status == 0)
            let size = try Data(contentsOf: URL(fileURLWithPath: journal)).count
            let truncated = "\(directory)/truncated.sqlite"
            try Data(try Data(contentsOf: URL(fileURLWithPath: journal)).prefix(size / 2)).write(
                to: URL(fileURLWithPath: truncated))
            let cut = try start(truncated)
            #expect(cut.status != 0)
            #expect(cut.error.contains("journal-") && cut.error.contains("truncated.sqlite"), "\(cut.error)")

            try cluster.startBroker(["--journal", journal])
            try cluster.startWorker("w1")
            try await cluster.waitUntilServing(try cluster.client())  // the first broker holds the journal
            let second = try start(journal)
            #expect(second.status != 0)
            #expect(second.error.contains("journal-locked"), "\(second.error)")
        }
        #if PostgreSQL

            /// The same with a PostgreSQL journal (a private server from Debian's packages): a SIGKILLed broker started
            /// again on it finishes what it accepted and still answers STATUS; while one broker holds the journal's
            /// advisory lock, a second one on the same database is refused.
            @Test func aBrokerOnAPostgresJournalSurvivesASigkillAndHoldsItAlone() async throws {
                let server = try PostgresServer()
                let cluster = try Cluster()
                let (client, done) = try await cluster.startJournaled(server.url)
                let second = try runConcierge([
                    "broker", "--frontend", "ipc://\(cluster.directory.path)/f2", "--backend",
                    "ipc://\(cluster.directory.path)/b2", "--journal", server.url,
                ])
                #expect(second.status != 0 && second.error.contains("journal-locked"), "\(second.error)")
                let running = client.send(
                    intent: delayedEcho("slow", delayMs: 2000, in: "resolve"), phase: .resolve, deadline: .seconds(30),
                    requestID: "running")
                try await client.waitUntilRunning("running", on: "w1")
                cluster.signal("broker", SIGKILL)
                _ = await cluster.waitForExit("broker")
                try cluster.start(
                    "broker-2",
                    [
                        "broker", "--frontend", cluster.frontend, "--backend", cluster.backend, "--heartbeat-ms", "250",
                        "--journal", server.url,
                    ])
                let rerun = try #require(try await Cluster.replies(running).last)
                #expect(rerun.status == .final, "\(rerun.errorCode ?? "")")
                let stored = try await client.status(of: "done")
                #expect(stored.status == .final && stored.body == done.body)
            }
        #else
            /// A build without the PostgreSQL trait refuses a postgres:// journal at start, with a stable code that
            /// says how to get one, rather than failing later or falling back to memory.
            @Test func aDefaultBuildRefusesAPostgresJournalSayingHowToBuildOne() async throws {
                let cluster = try Cluster()
                let started = try runConcierge([
                    "broker", "--frontend", "ipc://\(cluster.directory.path)/f2", "--backend",
                    "ipc://\(cluster.directory.path)/b2", "--journal", "postgres://nobody@127.0.0.1:1/none",
                ])
                #expect(started.status != 0)
                #expect(started.error.contains("journal-not-built"), "\(started.error)")
                #expect(started.error.contains("--traits PostgreSQL"), "\(started.error)")
                let initialized = try runConcierge(["journal", "init", "postgres://nobody@127.0.0.1:1/none"])
                #expect(initialized.status != 0)
                #expect(initialized.error.contains("journal-not-built"), "\(initialized.error)")
            }
        #endif
    }
}
