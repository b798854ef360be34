import ArgumentParser
import Foundation
import IntentJournal

extension JournalCommand {
    /// `concierge journal bench`: commits per second of batches of accepted requests, on the disk of a directory.
    struct Bench: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Measure journal commits per second for batches of 1 and 64 accepted requests.",
            discussion: """
                Creates a scratch journal in DIRECTORY (run it on the disk the broker's journal will live on: a \
                tmpfs has no fsync cost), commits batches of accepted requests with 300-byte bodies for about \
                --seconds per batch size, prints commits/s, requests/s and commit latency percentiles, and \
                removes the journal. Exit status: 0, or 1 with a journal error.
                """
        )

        @Option(help: "Where to put the scratch journal.")
        var directory: String = "."

        @Option(help: "Seconds per batch size.")
        var seconds: Double = 2

        @Option(help: "`batch` (fsync every commit) or a sync interval in milliseconds.")
        var fsync: String = "batch"

        @Option(help: "Request body size in bytes.")
        var bodyBytes: Int = 300

        func validate() throws {
            guard seconds > 0, bodyBytes >= 0 else {
                throw ValidationError("--seconds and --body-bytes must be positive")
            }
            guard fsync == "batch" || (Int(fsync) ?? 0) > 0 else {
                throw ValidationError("--fsync takes `batch` or a number of milliseconds")
            }
        }

        func run() throws {
            let sync: JournalSync = fsync == "batch" ? .everyCommit : .interval(.milliseconds(Int(fsync)!))
            let path = directory + "/concierge-journal-bench-\(getpid()).sqlite"
            defer { for suffix in ["", "-wal", "-shm", "-lock"] { unlink(path + suffix) } }
            do {
                try SQLiteJournal.create(path: path)
                let journal = try SQLiteJournal(path: path, sync: sync)
                defer { journal.close() }
                print("concierge journal bench: \(path), fsync \(fsync), bodies of \(bodyBytes) bytes")
                var next: UInt64 = 1
                for batch in [1, 64] {
                    try measure(journal, batch: batch, next: &next)
                }
            } catch {
                throw JournalCommand.fail(error)
            }
        }

        private func measure(_ journal: SQLiteJournal, batch: Int, next: inout UInt64) throws(JournalError) {
            let body = [UInt8](repeating: 0x61, count: bodyBytes)
            let clock = ContinuousClock()
            let start = clock.now
            var commits = 0
            var latencies: [Duration] = []
            while start.duration(to: clock.now) < .seconds(seconds) {
                var operations: [JournalOperation] = []
                operations.reserveCapacity(batch)
                for _ in 0..<batch {
                    operations.append(
                        .accepted(
                            JournalRequest(
                                id: next, client: Array("client-0001".utf8), requestID: Array("r\(next)".utf8),
                                intentType: Array("Echo".utf8), phase: "lifecycle", body: body,
                                deadlineMilliseconds: 5000, acceptedAt: Int64(Date().timeIntervalSince1970 * 1000))))
                    next += 1
                }
                let commitStart = clock.now
                try journal.commit(operations)
                latencies.append(commitStart.duration(to: clock.now))
                commits += 1
            }
            let elapsed = start.duration(to: clock.now)
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            latencies.sort()
            func micros(_ fraction: Double) -> Int {
                let duration = latencies[min(latencies.count - 1, Int(Double(latencies.count) * fraction))]
                return Int(duration.components.seconds) * 1_000_000
                    + Int(duration.components.attoseconds / 1_000_000_000_000)
            }
            print(
                "batch \(batch): \(commits) commits in \(String(format: "%.2f", seconds)) s: "
                    + "\(Int(Double(commits) / seconds)) commits/s, \(Int(Double(commits * batch) / seconds)) requests/s, "
                    + "commit latency p50 \(micros(0.5)) µs, p99 \(micros(0.99)) µs")
        }
    }
}
