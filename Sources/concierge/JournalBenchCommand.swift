import ArgumentParser
import Foundation
import IntentJournal

extension JournalCommand {
    /// `concierge journal bench`: what a broker's journal costs per request, on the disk of a directory.
    ///
    /// Each commit models one batch of the broker's loop: `batch` requests accepted (with their bodies) and their
    /// handle jobs dispatched, and as many of the oldest open requests ended with a result (so that `--in-flight`
    /// requests stay open), plus the broker's expiry of old results once a second.
    struct Bench: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Measure what the journal costs per request for batches of 1, 8 and 64 requests.",
            discussion: """
                Creates a scratch journal in DIRECTORY (run it on the disk the broker's journal will live on: a \
                tmpfs has no fsync cost) and commits batches as a broker's loop does: each commit accepts BATCH \
                requests with --body-bytes bodies, dispatches their handle jobs, and ends as many of the oldest \
                open ones with a result of the same size, keeping --in-flight requests open; once a second it \
                expires the results older than --result-ttl. For about --seconds per batch size it prints \
                commits/s, requests/s, commit latency percentiles, and per request the CPU time of this process \
                and the bytes it wrote; then it removes the journal. Exit status: 0, or 1 with a journal error.
                """
        )

        @Option(help: "Where to put the scratch journal.")
        var directory: String = "."

        @Option(help: "Seconds per batch size.")
        var seconds: Double = 2

        @Option(help: "`batch` (fsync every commit) or a sync interval in milliseconds.")
        var fsync: String = "batch"

        @Option(help: "Request and result body size in bytes.")
        var bodyBytes: Int = 300

        @Option(help: "Requests kept open (accepted, not yet ended).")
        var inFlight: Int = 100

        @Option(help: "Seconds results are kept before they expire (the broker's default is 60).")
        var resultTTL: Double = 60

        @Option(help: "Batch sizes (requests accepted and ended per commit), comma-separated.")
        var batches: String = "1,8,64"

        func validate() throws {
            guard seconds > 0, bodyBytes >= 0, inFlight >= 0, resultTTL >= 0 else {
                throw ValidationError("--seconds, --body-bytes, --in-flight and --result-ttl must be positive")
            }
            guard fsync == "batch" || (Int(fsync) ?? 0) > 0 else {
                throw ValidationError("--fsync takes `batch` or a number of milliseconds")
            }
            guard !batchSizes.isEmpty else { throw ValidationError("--batches takes sizes such as 1,8,64") }
        }

        private var batchSizes: [Int] {
            let sizes = batches.split(separator: ",").compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }
            return sizes.count == batches.split(separator: ",").count && sizes.allSatisfy({ $0 > 0 }) ? sizes : []
        }

        func run() throws {
            let sync: JournalSync = fsync == "batch" ? .everyCommit : .interval(.milliseconds(Int(fsync)!))
            let path = directory + "/concierge-journal-bench-\(getpid()).sqlite"
            defer { for suffix in ["", "-wal", "-shm", "-lock"] { unlink(path + suffix) } }
            do {
                try SQLiteJournal.create(path: path)
                let journal = try SQLiteJournal(path: path, sync: sync)
                defer { journal.close() }
                print(
                    "concierge journal bench: \(path), fsync \(fsync), bodies of \(bodyBytes) bytes, "
                        + "\(inFlight) in flight, results kept \(resultTTL) s")
                var model = BrokerModel(bodyBytes: bodyBytes, inFlight: inFlight, resultTTL: resultTTL)
                for batch in batchSizes {
                    try measure(journal, batch: batch, model: &model)
                }
            } catch {
                throw JournalCommand.fail(error)
            }
        }

        private func measure(_ journal: SQLiteJournal, batch: Int, model: inout BrokerModel) throws(JournalError) {
            let clock = ContinuousClock()
            let start = clock.now
            let usage = ProcessUsage.now()
            var commits = 0
            var requests = 0
            var latencies: [Duration] = []
            while start.duration(to: clock.now) < .seconds(seconds) {
                let operations = model.batch(batch)
                let commitStart = clock.now
                try journal.commit(operations)
                latencies.append(commitStart.duration(to: clock.now))
                commits += 1
                requests += batch
            }
            let elapsed = start.duration(to: clock.now)
            let used = ProcessUsage.now().minus(usage)
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            latencies.sort()
            func micros(_ fraction: Double) -> Int {
                let duration = latencies[min(latencies.count - 1, Int(Double(latencies.count) * fraction))]
                return Int(duration.components.seconds) * 1_000_000
                    + Int(duration.components.attoseconds / 1_000_000_000_000)
            }
            let perRequest = Double(max(requests, 1))
            print(
                "batch \(batch): \(commits) commits in \(String(format: "%.2f", seconds)) s: "
                    + "\(Int(Double(commits) / seconds)) commits/s, \(Int(Double(requests) / seconds)) requests/s, "
                    + "commit latency p50 \(micros(0.5)) µs, p99 \(micros(0.99)) µs; per request: CPU "
                    + String(
                        format: "%.1f µs (system %.1f)", used.cpu / perRequest * 1e6, used.system / perRequest * 1e6)
                    + ", \(Int(Double(used.writtenBytes) / perRequest)) bytes in "
                    + String(format: "%.1f", Double(used.writeCalls) / perRequest) + " write calls")
        }
    }
}

/// The journal operations of a broker's loop under a steady closed-loop load (bench only).
private struct BrokerModel {
    let body: [UInt8]
    let inFlight: Int
    let resultTTL: Double
    private var next: UInt64 = 1
    private var oldestOpen: UInt64 = 1
    private var lastExpiry = Date()

    init(bodyBytes: Int, inFlight: Int, resultTTL: Double) {
        body = [UInt8](repeating: 0x61, count: bodyBytes)
        self.inFlight = inFlight
        self.resultTTL = resultTTL
    }

    /// One commit's operations: `count` requests accepted and dispatched, the oldest ended down to `inFlight` open.
    mutating func batch(_ count: Int) -> [JournalOperation] {
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        var operations: [JournalOperation] = []
        operations.reserveCapacity(3 * count + 1)
        for _ in 0..<count {
            let id = next
            next += 1
            operations.append(
                .accepted(
                    JournalRequest(
                        id: id, client: Array("\0clnt".utf8), requestID: withUnsafeBytes(of: id) { Array($0) },
                        intentType: Array("Echo".utf8), phase: "handle", body: body, deadlineMilliseconds: 5000,
                        acceptedAt: now)))
            operations.append(.handleDispatched(request: id))
        }
        while next - oldestOpen > UInt64(inFlight) {
            let id = oldestOpen
            oldestOpen += 1
            let key = JournalRequestKey(
                client: Array("\0clnt".utf8), requestID: withUnsafeBytes(of: id) { Array($0) }, version: 2)
            operations.append(
                .ended(
                    request: id,
                    results: [JournalResult(key: key, isError: false, phase: "handle", body: body, storedAt: now)]))
        }
        if Date().timeIntervalSince(lastExpiry) >= 1 {
            lastExpiry = Date()
            operations.append(.resultsExpired(storedBefore: now - Int64(resultTTL * 1000)))
        }
        return operations
    }
}

/// This process's CPU time (getrusage) and writes (`/proc/self/io`: bytes passed to write calls, and their count).
private struct ProcessUsage {
    var cpu: Double
    var system: Double
    var writtenBytes: Int
    var writeCalls: Int

    static func now() -> ProcessUsage {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
        var written = 0
        var calls = 0
        if let text = try? String(contentsOfFile: "/proc/self/io", encoding: .utf8) {
            for line in text.split(separator: "\n") {
                let parts = line.split(separator: ":").map { $0.trimmingCharacters(in: .whitespaces) }
                guard parts.count == 2, let value = Int(parts[1]) else { continue }
                if parts[0] == "wchar" { written = value }
                if parts[0] == "syscw" { calls = value }
            }
        }
        return ProcessUsage(
            cpu: seconds(usage.ru_utime) + seconds(usage.ru_stime), system: seconds(usage.ru_stime),
            writtenBytes: written, writeCalls: calls)
    }

    func minus(_ earlier: ProcessUsage) -> ProcessUsage {
        ProcessUsage(
            cpu: cpu - earlier.cpu, system: system - earlier.system, writtenBytes: writtenBytes - earlier.writtenBytes,
            writeCalls: writeCalls - earlier.writeCalls)
    }
}
