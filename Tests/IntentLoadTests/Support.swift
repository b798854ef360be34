import ConciergeJSON
import ConciergeTestKit
import Foundation
import IntentWire
import Synchronization
import ZeroMQ

@testable import IntentLoad

// MARK: Small helpers

/// A small deterministic generator for tests (SplitMix64, independent of the one in IntentLoad).
struct TestGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// The outcome key of a final reply with `body` for `phase`.
func finalOutcome(_ phase: String, _ body: String) -> String {
    Array(body.utf8).withUnsafeBytes { LoadOutcome.final(phase: phase, body: $0) }
}

/// The outcome key of an error reply with `body`.
func errorOutcome(_ body: String) -> String {
    Array(body.utf8).withUnsafeBytes { LoadOutcome.error(body: $0) }
}

/// A fresh private directory under the temporary directory (the caller removes it).
func makeTemporaryDirectory(_ prefix: String) throws -> URL {
    let url = FileManager.default.temporaryDirectory
        .appendingPathComponent("\(prefix)-\(UInt32.random(in: 0...UInt32.max))")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

/// A workload from mix JSON text.
func mix(_ json: String, phase: RequestPhase? = nil) throws -> LoadWorkload {
    try LoadWorkload.mix(json: Array(json.utf8), overridePhase: phase)
}

/// Outcome keys other than `progress` (whose count depends on how fast replies come).
func finalOutcomes(_ summary: LoadSummary) -> [String: Int] {
    summary.outcomes.filter { $0.key != LoadOutcome.progress }
}

/// A summary built from a recorder (the memberwise initializer is internal; tests are built with @testable).
func makeSummary(
    _ recorder: LoadRecorder,
    mode: String = "closed",
    durationSeconds: Double = 1,
    workload: [String] = ["Echo (handle, weight 1)"],
    throughputRPS: Double? = nil,
    firstReply: LatencyPercentiles? = nil,
    finalReply: LatencyPercentiles? = nil
) -> LoadSummary {
    LoadSummary(
        mode: mode,
        concurrency: mode == "closed" ? 10 : nil,
        targetRate: mode == "open" ? 1000 : nil,
        connections: 2,
        durationSeconds: durationSeconds,
        warmupSeconds: 0.5,
        deadlineMilliseconds: 3000,
        workload: workload,
        requests: recorder.requests,
        throughputRPS: throughputRPS ?? Double(recorder.finalReplies) / durationSeconds,
        answeredRPS: Double(recorder.finalReplies + recorder.errorReplies) / durationSeconds,
        offeredRPS: Double(recorder.requests) / durationSeconds,
        finalReplies: recorder.finalReplies,
        errorReplies: recorder.errorReplies,
        progressReplies: recorder.progressReplies,
        unanswered: recorder.unanswered,
        deadlineMisses: recorder.deadlineMisses,
        outcomes: recorder.outcomes,
        firstReply: firstReply ?? LatencyPercentiles(recorder.firstReply),
        finalReply: finalReply ?? LatencyPercentiles(recorder.finalReply),
        clientBacklogMax: 0,
        strayReplies: 0,
        timeline: recorder.timeline,
        firstReplyHistogram: recorder.firstReply,
        finalReplyHistogram: recorder.finalReply
    )
}

/// A recorder with `count` requests answered successfully, request `i` with a final-reply latency of
/// `(i + 1) * stepMicros` µs and a first reply at half that, spread over `intervals` timeline intervals of 100 ms.
func makeRecorder(count: Int, stepMicros: UInt64 = 10, intervals: Int = 3) -> LoadRecorder {
    let origin: UInt64 = 1_000_000_000
    var recorder = LoadRecorder(origin: origin, interval: .milliseconds(100))
    for index in 0..<count {
        let now = origin + UInt64(index * intervals) * 100_000_000 / UInt64(max(count, 1))
        let latency = UInt64(index + 1) * stepMicros * 1000
        recorder.recordSent(now: now)
        recorder.recordFirstReply(latency: latency / 2, missedDeadline: false)
        recorder.recordFinalReply(latency: latency, outcome: "final.handle.success", isError: false, now: now)
    }
    recorder.finish(now: origin + UInt64(intervals) * 100_000_000 - 1)
    return recorder
}

/// A progress callback that holds up the load thread (which calls it) once, on its first call. The stall is what the
/// tests using it are about (requests falling due while the sender is held up), not a wait for something to happen.
final class StallOnce: Sendable {
    private let calls = Mutex(0)
    private let microseconds: UInt32

    init(milliseconds: UInt32) { microseconds = milliseconds * 1000 }

    func callAsFunction(_ progress: LoadProgress) {
        let first = calls.withLock { count in
            count += 1
            return count == 1
        }
        if first { usleep(microseconds) }
    }
}

// MARK: Real processes

extension Cluster {
    /// A broker and `workers` example workers (each of `capacity`), serving Echo.
    static func serving(workers: Int = 1, capacity: Int = 16) async throws -> Cluster {
        let cluster = try Cluster()
        try cluster.startBroker()
        for index in 0..<workers { try cluster.startWorker("w\(index + 1)", capacity: capacity) }
        try await cluster.waitUntilServing(cluster.client())
        return cluster
    }
}

/// What a finished `concierge` process left.
struct CommandResult {
    var status: Int32
    var reason: Process.TerminationReason
    var stdout: String
    var stderr: String

    /// Standard output parsed as JSON.
    func json() throws -> JSONValue { try JSONValue.parse(stdout) }
}

struct CommandTimedOut: Error, CustomStringConvertible {
    var arguments: [String]
    var description: String { "concierge \(arguments.joined(separator: " ")) did not exit in time" }
}

/// Runs `concierge <arguments>` as a real process and waits for it (killed, by pid, after `timeout`).
/// Standard output and error go to files (no pipe can fill up and block the child).
/// `interruptWhenStandardErrorContains`: send SIGINT (as Ctrl-C would) once standard error contains this text.
func runConcierge(
    _ arguments: [String], timeout: Duration = .seconds(60), interruptWhenStandardErrorContains: String? = nil
) async throws -> CommandResult {
    let directory = try makeTemporaryDirectory("concierge-load-cli")
    defer { try? FileManager.default.removeItem(at: directory) }
    let outURL = directory.appendingPathComponent("stdout")
    let errURL = directory.appendingPathComponent("stderr")
    _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
    _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
    let out = try FileHandle(forWritingTo: outURL)
    let err = try FileHandle(forWritingTo: errURL)
    defer {
        try? out.close()
        try? err.close()
    }
    let process = Process()
    process.executableURL = Cluster.executable
    process.arguments = arguments
    process.standardOutput = out
    process.standardError = err
    process.standardInput = FileHandle.nullDevice
    try process.run()
    let end = ContinuousClock.now + timeout
    if let text = interruptWhenStandardErrorContains {
        while process.isRunning && ContinuousClock.now < end
            && !((try? String(contentsOf: errURL, encoding: .utf8)) ?? "").contains(text)
        {
            try await Task.sleep(for: .milliseconds(20))
        }
        if process.isRunning { kill(process.processIdentifier, SIGINT) }
    }
    while process.isRunning && ContinuousClock.now < end { try await Task.sleep(for: .milliseconds(20)) }
    if process.isRunning {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        throw CommandTimedOut(arguments: arguments)
    }
    process.waitUntilExit()
    return CommandResult(
        status: process.terminationStatus,
        reason: process.terminationReason,
        stdout: (try? String(contentsOf: outURL, encoding: .utf8)) ?? "",
        stderr: (try? String(contentsOf: errURL, encoding: .utf8)) ?? ""
    )
}

// MARK: A scripted broker

/// A stand-in for the broker's frontend, for testing the load client alone: a ROUTER on a private `ipc://`
/// endpoint, on a thread of its own, that answers PING with PONG and answers each REQUEST as its script says.
/// It records every request it got, with the connection (routing id) it came on.
final class FakeBroker: Sendable {
    struct Request: Sendable {
        var connection: [UInt8]
        var id: [UInt8]
        var intentType: String
        var phase: String
        var deadline: String
        var body: [UInt8]
        /// F0: `CIPC01`, or `CIPC02` for a request with an idempotency key.
        var signature: String = "CIPC01"
        /// F7 of a `CIPC02` REQUEST (the idempotency key; empty for none); nil for `CIPC01`.
        var key: [UInt8]? = nil
    }

    /// A message to send back on the request's connection, `after` it came: the frames after the routing id.
    struct Reply: Sendable {
        var after: Duration = .zero
        var frames: [[UInt8]]

        /// `[CIPC01, REPLY, id, status, phase, body]`.
        static func reply(
            _ status: StaticString, id: [UInt8], phase: String = "handle", body: String, after: Duration = .zero
        ) -> Reply {
            Reply(
                after: after,
                frames: [
                    CIP.clientSignature.bytes, CIP.Broker.reply.bytes, id, status.bytes, Array(phase.utf8),
                    Array(body.utf8),
                ]
            )
        }

        /// `[CIPC02, REPLY, id, status, phase, body, flags]`: the version-02 answer to a keyed request.
        static func replyV2(
            _ status: StaticString, id: [UInt8], phase: String = "handle", body: String, flags: String = ""
        ) -> Reply {
            Reply(
                frames: [
                    CIP.clientSignatureV2.bytes, CIP.Broker.reply.bytes, id, status.bytes, Array(phase.utf8),
                    Array(body.utf8), Array(flags.utf8),
                ]
            )
        }

        /// A final handle reply with code success.
        static func success(_ request: Request, after: Duration = .zero) -> Reply {
            reply(
                CIP.Status.final, id: request.id, phase: "handle",
                body: #"{"intent":{"type":"Echo"},"handle":{"code":"success"}}"#, after: after
            )
        }
    }

    typealias Script = @Sendable (_ index: Int, _ request: Request) -> [Reply]

    let endpoint: String
    private let directory: URL
    private let script: Script
    private let received = Mutex<[Request]>([])
    private let stopping = Atomic<Bool>(false)
    private let stopped = Atomic<Bool>(false)
    private let context: ZMQContext
    private let router: ZMQSocket

    init(script: @escaping Script) throws {
        directory = try makeTemporaryDirectory("concierge-fake-broker")
        endpoint = "ipc://\(directory.path)/frontend"
        self.script = script
        context = ZMQContext()
        router = try ZMQSocket(context: context, type: .router)
        try router.setOption(.sendHighWaterMark, 0)
        try router.setOption(.receiveHighWaterMark, 0)
        try router.bind(endpoint)
        SocketThread.start(name: "fake-broker") { [self] in loop() }
    }

    /// Every request received so far, in order.
    var requests: [Request] { received.withLock { $0 } }

    /// Stops the thread and waits for it (at most a few seconds).
    func stop() {
        stopping.store(true, ordering: .sequentiallyConsistent)
        let end = ContinuousClock.now + .seconds(5)
        while !stopped.load(ordering: .sequentiallyConsistent) && ContinuousClock.now < end { usleep(2_000) }
        try? FileManager.default.removeItem(at: directory)
    }

    private func loop() {
        defer {
            router.close()
            context.terminate()
            stopped.store(true, ordering: .sequentiallyConsistent)
        }
        var pending: [(due: UInt64, connection: [UInt8], frames: [[UInt8]])] = []
        var poller = ZMQPoller()
        poller.add(router)
        do {
            while !stopping.load(ordering: .sequentiallyConsistent) {
                let now = MonotonicTime.now()
                pending.sort { $0.due < $1.due }
                while let first = pending.first, first.due <= now {
                    pending.removeFirst()
                    try router.send(multipart: [first.connection] + first.frames)
                }
                var timeout = 10
                if let first = pending.first { timeout = min(timeout, Int((first.due - now) / 1_000_000) + 1) }
                try poller.poll(timeoutMilliseconds: timeout)
                while let message = try router.receiveMultipart(dontWait: true) {
                    guard message.count >= 3 else { continue }
                    let connection = message[0]
                    if message[2] == CIP.Client.ping.bytes {
                        try router.send(multipart: [connection, CIP.clientSignature.bytes, CIP.Broker.pong.bytes])
                    } else if message[2] == CIP.Client.request.bytes,
                        message.count == 8 || (message.count == 9 && message[1] == CIP.clientSignatureV2.bytes)
                    {
                        let request = Request(
                            connection: connection, id: message[3],
                            intentType: String(decoding: message[4], as: UTF8.self),
                            phase: String(decoding: message[5], as: UTF8.self),
                            deadline: String(decoding: message[6], as: UTF8.self), body: message[7],
                            signature: String(decoding: message[1], as: UTF8.self),
                            key: message.count == 9 ? message[8] : nil
                        )
                        let index = received.withLock {
                            $0.append(request)
                            return $0.count - 1
                        }
                        let arrival = MonotonicTime.now()
                        for reply in script(index, request) {
                            pending.append((arrival + reply.after.nanoseconds, connection, reply.frames))
                        }
                    }
                }
            }
        } catch {
            // The context or socket went away: the test is over.
        }
    }
}
