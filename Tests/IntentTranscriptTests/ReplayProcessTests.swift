import ConciergeExamples
import ConciergeJSON
import ConciergeTestKit
import Foundation
import IntentTesting
import IntentTranscript
import IntentTranscriptReplay
import Testing

/// Replays against processes: the slim `concierge-worker` started without a broker, and `concierge replay` itself.
@Suite(.serialized, .timeLimit(.minutes(3))) struct ReplayProcessTests {
    static let ignored = ["**.data.messageId"]

    @Test(arguments: [Fixture.sendMessage, Fixture.brokerRecorded])
    func aFixtureReplaysGreenAgainstASpawnedWorker(path: String) async throws {
        let transcript = try Transcript.load(path)
        let worker = try await ReplayWorkerProcess.start(executable: Cluster.slimWorkerExecutable.path)
        do {
            #expect(worker.intentTypes.contains("SendMessage"))
            #expect(worker.version >= 3)
            let report = try await transcript.replayPhases(ignoring: Self.ignored) { intentType, phase in
                try await worker.run(phase, intentType: intentType)
            }
            #expect(report.mismatches.isEmpty, "\(report)")
            #expect(report.comparison.comparedRecords == 4)
        } catch {
            await worker.stop()
            throw error
        }
        await worker.stop()
    }

    @Test func aWorkerThatIsNotAWorkerIsReportedWithItsLog() async throws {
        await #expect {
            _ = try await ReplayWorkerProcess.start(executable: "/bin/echo", arguments: ["no broker here"])
        } throws: { error in
            guard let error = error as? ReplayTargetError else { return false }
            return error.code == .workerNotReady && error.message.contains("no broker here")
        }
    }

    /// Runs `concierge replay <arguments>`; its exit status and standard output.
    static func replay(_ arguments: [String]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = Cluster.executable
        process.arguments = ["replay"] + arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    @Test func theCommandPrintsOkOrTheDiffAndExitsOneOnAMismatch() throws {
        let green = try Self.replay([Fixture.sendMessage, "--ignore", "**.data.messageId", "--coverage"])
        #expect(green.status == 0, "\(green.output)")
        #expect(green.output.hasPrefix("\(Fixture.sendMessage): ok (4 phases)\n"))
        #expect(green.output.contains("recipient: disambiguation 1, success 1"))

        // The same conversation as recorded from a handler whose handle answered otherwise.
        let text = try String(contentsOfFile: Fixture.sendMessage, encoding: .utf8)
        let changed = FileManager.default.temporaryDirectory
            .appendingPathComponent("changed-\(UInt32.random(in: 0...UInt32.max)).jsonl").path
        defer { try? FileManager.default.removeItem(atPath: changed) }
        var lines = text.split(separator: "\n").map(String.init)
        let handle = try #require(lines.lastIndex { $0.hasPrefix(#"{"record":"phase""#) })
        lines[handle] = lines[handle].replacingOccurrences(of: #""code":"success""#, with: #""code":"failure""#)
        try (lines.joined(separator: "\n") + "\n").write(toFile: changed, atomically: true, encoding: .utf8)
        let red = try Self.replay([changed, "--ignore", "**.data.messageId"])
        #expect(red.status == 1, "\(red.output)")
        #expect(
            red.output.contains("turn 2, handle, output: handle.code\n- recorded: \"failure\"\n+ replayed: \"success\"")
        )

        let json = try Self.replay([changed, "--json", "--ignore", "**.data.messageId"])
        let report = try JSONValue.parse(json.output)
        #expect(report["ok"] == false)
        #expect(report["transcripts"]?[0]?["mismatches"]?[0]?["path"] == "handle.code")

        let missing = try Self.replay(["/nonexistent.jsonl"])
        #expect(missing.status == 2 && missing.output.contains("not replayed: "))
    }

    @Test func aLiveBrokerRecordsTheReplayedConversationAndThatTranscriptReplaysGreen() async throws {
        let cluster = try Cluster()
        defer { cluster.stopAll() }
        let transcripts = cluster.directory.appendingPathComponent("transcripts").path
        try cluster.startBroker(["--transcripts", transcripts, "--record-all-conversations"])
        try cluster.startWorker("w1")
        try await cluster.waitUntilServing(try cluster.client())

        let connection = try ReplayBrokerConnection(endpoint: cluster.frontend)
        defer { connection.close() }
        let live = try await connection.replay(try Transcript.load(Fixture.sendMessage), ignoring: Self.ignored)
        #expect(live.mismatches.isEmpty, "\(live)\nbroker log:\n\(cluster.log("broker"))")

        // The broker recorded that conversation: its transcript replays green in process and against the broker.
        let files = try FileManager.default.contentsOfDirectory(atPath: transcripts).filter { $0.hasPrefix("replay-") }
        let recorded = try Transcript.load(transcripts + "/" + (try #require(files.first)))
        #expect(
            recorded.end?.ending == "completed"
                && recorded.phases.map(\.phase) == ["resolve", "resolve", "confirm", "handle"])
        let report = await TranscriptReplay(recorded, ignoring: Self.ignored).run(on: Examples.provider)
        #expect(report.mismatches.isEmpty, "\(report)")
        let again = try await connection.replay(recorded, ignoring: Self.ignored)
        #expect(again.mismatches.isEmpty, "\(again)")
    }
}
