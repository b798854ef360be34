import Foundation
import IntentJournal
import Testing

/// `concierge journal` as operators run it: exit statuses and messages, and a broker-like writer killed with
/// SIGKILL mid-run leaving a journal that recovers everything up to its last commit.
@Suite(.serialized) struct JournalCommandTests {
    let directory: TemporaryDirectory

    init() throws { directory = try TemporaryDirectory() }

    /// The built `concierge` executable, next to the test bundle.
    static var executable: URL {
        if let path = ProcessInfo.processInfo.environment["CONCIERGE_EXECUTABLE"] {
            return URL(fileURLWithPath: path)
        }
        var url = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        while !FileManager.default.fileExists(atPath: url.appendingPathComponent("concierge").path), url.path != "/" {
            url = url.deletingLastPathComponent()
        }
        return url.appendingPathComponent("concierge")
    }

    struct Outcome {
        var status: Int32
        var output: String
        var error: String
    }

    func concierge(_ arguments: String...) throws -> Outcome {
        let process = Process()
        process.executableURL = Self.executable
        process.arguments = arguments
        let output = Pipe()
        let error = Pipe()
        process.standardOutput = output
        process.standardError = error
        try process.run()
        let out = output.fileHandleForReading.readDataToEndOfFile()
        let err = error.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Outcome(
            status: process.terminationStatus, output: String(decoding: out, as: UTF8.self),
            error: String(decoding: err, as: UTF8.self))
    }

    @Test func initCheckAndBackupExitWithTheirStatus() throws {
        let path = directory.file("broker.journal")
        var outcome = try concierge("journal", "init", path)
        #expect(outcome.status == 0)
        outcome = try concierge("journal", "init", path)
        #expect(outcome.status == 1)
        #expect(outcome.error.contains("journal-exists"))

        let journal = try SQLiteJournal(path: path)
        try journal.commit([
            .accepted(Sample.request(1)), .accepted(Sample.request(2)), .handleDispatched(request: 2),
            .stored([Sample.result(Sample.key("c", "r"), storedAt: 1)]),
            .keyRecord(Sample.keyRecord("k", state: .inFlight(request: 1), endedAt: nil)),
            .conversation(Sample.conversation("c-1", scope: "client-a", turn: 1, at: 5)),
        ])
        // Check and backup work while the journal is open (a broker running).
        outcome = try concierge("journal", "check", path)
        #expect(outcome.status == 0)
        #expect(outcome.output.contains("requests open: 2 (handle dispatched: 1"))
        #expect(outcome.output.contains("results: 1"))
        #expect(outcome.output.contains("key records: 1"))
        #expect(outcome.output.contains("conversations: 1"))
        #expect(outcome.output.contains("next request id: 3"))
        let copy = directory.file("copy.journal")
        outcome = try concierge("journal", "backup", path, copy)
        #expect(outcome.status == 0)
        outcome = try concierge("journal", "backup", path, copy)
        #expect(outcome.status == 1)
        #expect(outcome.error.contains("journal-exists"))
        #expect(try SQLiteJournal.recovered(copy) == (try journal.recover()))
        journal.close()

        outcome = try concierge("journal", "check", directory.file("missing.journal"))
        #expect(outcome.status == 1)
        #expect(outcome.error.contains("journal-missing"))
        let garbage = directory.file("garbage.journal")
        #expect(FileManager.default.createFile(atPath: garbage, contents: Data(repeating: 0x5A, count: 8192)))
        outcome = try concierge("journal", "check", garbage)
        #expect(outcome.status == 1)
        #expect(outcome.error.contains("journal-corrupt"))
    }

    @Test func aWriterKilledMidRunLeavesEveryCommitAndHoldsTheLockWhileAlive() throws {
        let process = Process()
        process.executableURL = Self.executable
        // Requests stay open (none is ended), so the journal holds every request accepted so far: a prefix.
        process.arguments = [
            "journal", "bench", "--directory", directory.path, "--seconds", "60", "--in-flight", "100000000",
        ]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        defer {
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
        }
        let path = directory.file("concierge-journal-bench-\(process.processIdentifier).sqlite")
        var seen = 0
        let deadline = Date().addingTimeInterval(20)
        while seen < 20, Date() < deadline {
            Thread.sleep(forTimeInterval: 0.05)
            if FileManager.default.fileExists(atPath: path) {
                seen = (try? SQLiteJournal.check(path: path).openRequests) ?? 0
            }
        }
        try #require(seen >= 20)
        // A second writer is refused while the first lives.
        let error = #expect(throws: JournalError.self) { try SQLiteJournal(path: path) }
        #expect(error?.code == .locked)
        // A backup taken while it writes is one consistent snapshot: a prefix of its commits.
        let copy = directory.file("copy.sqlite")
        try SQLiteJournal.backup(path: path, to: copy)
        let copied = try SQLiteJournal.recovered(copy)
        #expect(copied.requests.count >= seen)
        #expect(copied.requests.map(\.id) == Array(1...UInt64(copied.requests.count)))

        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        #expect(process.terminationReason == .uncaughtSignal)

        // A copy whose WAL lost its tail mid-frame (a torn write) recovers a prefix of the commits.
        let walBytes = try #require(FileManager.default.contents(atPath: path + "-wal"))
        #expect(walBytes.count > 10_000)
        let torn = directory.file("torn.sqlite")
        try FileManager.default.copyItem(atPath: path, toPath: torn)
        #expect(FileManager.default.createFile(atPath: torn + "-wal", contents: walBytes.prefix(walBytes.count - 3001)))

        // The lock went with the process; everything committed before the kill is there, and nothing half-written.
        let state = try SQLiteJournal.recovered(path)
        #expect(state.requests.count >= seen)
        #expect(state.requests.map(\.id) == Array(1...UInt64(state.requests.count)))
        #expect(state.requests.allSatisfy { $0.body.count == 300 })
        #expect(state.nextRequestID == UInt64(state.requests.count) + 1)
        #expect(try SQLiteJournal.check(path: path).openRequests == state.requests.count)
        let tornState = try SQLiteJournal.recovered(torn)
        #expect(tornState.requests.count < state.requests.count)
        #expect(tornState.requests == Array(state.requests.prefix(tornState.requests.count)))
        #expect(copied.requests == Array(state.requests.prefix(copied.requests.count)))
    }
}
