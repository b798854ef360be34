import ConciergeJSON
import IntentKit
import Logging
import Synchronization
import Testing
import ZeroMQ

@testable import IntentWorker

#if canImport(Glibc)
    import Glibc
#endif

/// A real ``Worker`` taking `CIPW02` JOBs (`Schemas/PROTOCOL.md` section 5.13) from a scripted broker: a ROUTER
/// socket in the test. Its READY is `CIPW06` (version 06 is version 05 with a JOB's fields packed into one header frame, section 5.17; version 05 is version 04 with the trace context in JOB; version 04 is version 03, chained jobs of section 5.15, and READY announcing each type's definition, section 5.16), a JOB's key and attempt reach the handler, and a CANCEL stops a running handler
/// (RESULT `cancelled`) in both execution modes, while a CANCEL of a job it does not run is ignored. Every wait is
/// bounded; events are ordered by waiting for observable state, never by sleeping.
@Suite(.serialized, .timeLimit(.minutes(3))) struct WorkerVersion2Tests {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// Log events kept for the test: message and metadata (the logger's and the event's).
    final class LogRecord: Sendable {
        private let events = Mutex<[(message: String, metadata: Logger.Metadata)]>([])
        func append(_ message: String, _ metadata: Logger.Metadata) {
            events.withLock { $0.append((message, metadata)) }
        }
        func metadata(of message: String) -> [Logger.Metadata] {
            events.withLock { $0.filter { $0.message == message }.map(\.metadata) }
        }
    }

    struct Recorder: LogHandler {
        let record: LogRecord
        var logLevel: Logger.Level = .debug
        var metadata: Logger.Metadata = [:]
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(event: LogEvent) {
            record.append(event.message.description, metadata.merging(event.metadata ?? [:]) { $1 })
        }
    }

    /// The broker's side: a ROUTER bound where the worker connects, speaking frames by hand. It answers the
    /// worker's HEARTBEATs, so the worker never finds it silent.
    final class ScriptedBroker {
        let context = ZMQContext()
        let socket: ZMQSocket
        let endpoint = "ipc:///tmp/concierge-w2-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        var worker: [UInt8] = []

        init() throws {
            socket = try ZMQSocket(context: context, type: .router)
            try socket.setOption(.linger, 0)
            try socket.setOption(.routerHandover, 1)  // as the broker: a worker's new connection takes its name over
            try socket.bind(endpoint)
        }

        func close() {
            socket.close()
            context.terminate()
        }

        /// The next message from the worker other than HEARTBEAT (routing id removed); throws after `limit`.
        func next(within limit: Duration = .seconds(20)) async throws -> [[UInt8]] {
            let end = ContinuousClock.now + limit
            while ContinuousClock.now < end {
                guard let message = try socket.receiveMultipart(dontWait: true) else {
                    try await Task.sleep(for: .milliseconds(2))  // polling interval, not ordering
                    continue
                }
                worker = message[0]
                let frames = Array(message.dropFirst())
                if frames.count == 2 && frames[1] == Array("HEARTBEAT".utf8) {
                    try send(["CIPW02", "HEARTBEAT"])
                    continue
                }
                return frames
            }
            throw Failure(description: "no message from the worker within \(limit)")
        }

        func send(_ frames: [[UInt8]]) throws {
            guard try socket.send(multipart: [worker] + frames) else {
                throw Failure(description: "the worker's queue is full")
            }
        }

        func send(_ frames: [String]) throws { try send(frames.map { Array($0.utf8) }) }
    }

    static func jobID(_ number: UInt8) -> [UInt8] { [0x4A, 0, 0, 0, 0, 0, 0, number] }

    /// A `CIPW02` handle JOB for the Wait intent.
    static func job(_ id: [UInt8], mode: String, key: String = "", attempt: String = "1") -> [[UInt8]] {
        [
            Array("CIPW02".utf8), Array("JOB".utf8), id, Array("Wait".utf8), Array("handle".utf8),
            Array("30000".utf8), Array(#"{"intent":{"type":"Wait","parameters":{"mode":"\#(mode)"}}}"#.utf8),
            Array(key.utf8), Array(attempt.utf8),
        ]
    }

    static func text(_ frames: [[UInt8]]) -> [String] { frames.map { String(decoding: $0, as: UTF8.self) } }

    /// A running worker and its scripted broker, registered.
    struct Setup {
        let broker: ScriptedBroker
        let worker: Worker
        let run: Task<Void, any Error>
        let probe: WaitProbe
        let log: LogRecord
        let ready: [[UInt8]]
    }

    static func start(_ execution: WorkerConfiguration.JobExecution) async throws -> Setup {
        let broker = try ScriptedBroker()
        let probe = WaitProbe()
        var provider = HandlerProvider()
        provider.register { WaitHandler(probe: probe) }
        let log = LogRecord()
        let worker = Worker(
            configuration: .init(
                brokerEndpoint: broker.endpoint, name: "w2", capacity: 4, heartbeatInterval: .seconds(5),
                drainTimeout: .seconds(20), jobExecution: execution),
            provider: provider,
            logger: Logger(label: "test.worker2") { _ in Recorder(record: log) })
        let run = Task { try await worker.run() }
        do {
            let ready = try await broker.next()
            return Setup(broker: broker, worker: worker, run: run, probe: probe, log: log, ready: ready)
        } catch {
            worker.stop()
            broker.close()
            throw error
        }
    }

    /// Drains the worker as a broker would and waits until `run()` has returned.
    static func stop(_ setup: Setup, version: String = "CIPW06") async throws {
        defer { setup.broker.close() }
        setup.worker.stop()
        #expect(text(try await setup.broker.next()) == [version, "DRAIN"])
        try setup.broker.send(["CIPW02", "DRAIN"])
        #expect(text(try await setup.broker.next()) == [version, "DISCONNECT"])
        try await setup.run.value
    }

    /// Waits until `condition` holds; throws after `limit`.
    static func waitUntil(
        _ what: String, within limit: Duration = .seconds(20), _ condition: () -> Bool
    ) async throws {
        let end = ContinuousClock.now + limit
        while !condition() {
            guard ContinuousClock.now < end else { throw Failure(description: "\(what): not within \(limit)") }
            try await Task.sleep(for: .milliseconds(2))  // polling interval, not ordering
        }
    }

    /// The RESULT's outcome and body, checked to answer `id` in `version` (the worker's registered one).
    static func result(
        _ frames: [[UInt8]], answers id: [UInt8], version: String = "CIPW06"
    ) throws -> (outcome: String, body: JSONValue) {
        #expect(frames.count == 5)
        guard frames.count == 5, frames[0] == Array(version.utf8), frames[1] == Array("RESULT".utf8) else {
            throw Failure(description: "not a \(version) RESULT: \(text(frames))")
        }
        #expect(frames[2] == id)
        return (String(decoding: frames[3], as: UTF8.self), try JSONValue.parse(frames[4]))
    }

    @Test(arguments: WorkerConfiguration.JobExecution.allCases)
    func readyIsVersion4AndTheKeyAndAttemptReachTheHandler(execution: WorkerConfiguration.JobExecution) async throws {
        let setup = try await Self.start(execution)
        // Version 04 (section 5.16): each type is followed by its definition.
        #expect(Array(Self.text(setup.ready).prefix(5)) == ["CIPW06", "READY", "4", "w2", "Wait"])
        #expect(setup.ready.count == 6)
        let definition = try IntentDefinition(jsonBytes: setup.ready[5])
        #expect(definition == IntentDefinition(describing: WaitIntent.self))

        try setup.broker.send(Self.job(Self.jobID(1), mode: "now", key: "k-1", attempt: "3"))
        let keyed = try Self.result(try await setup.broker.next(), answers: Self.jobID(1))
        #expect(keyed.outcome == "stop")
        #expect(keyed.body["handle"]?["data"] == ["attempt": 3, "idempotencyKey": "k-1"])

        // Without a key: attempt 1 and no key; and a CIPW01 JOB still works.
        try setup.broker.send(Self.job(Self.jobID(2), mode: "now"))
        let plain = try Self.result(try await setup.broker.next(), answers: Self.jobID(2))
        #expect(plain.body["handle"]?["data"] == ["attempt": 1])
        try setup.broker.send([Array("CIPW01".utf8)] + Array(Self.job(Self.jobID(3), mode: "now")[1...6]))
        let v1 = try Self.result(try await setup.broker.next(), answers: Self.jobID(3))
        #expect(v1.body["handle"]?["data"] == ["attempt": 1])
        try await Self.stop(setup)
    }

    @Test(arguments: WorkerConfiguration.JobExecution.allCases)
    func aCancelStopsARunningHandlerAndTheJobIsAnsweredCancelled(
        execution: WorkerConfiguration.JobExecution
    ) async throws {
        let setup = try await Self.start(execution)
        let id = Self.jobID(7)
        try setup.broker.send(Self.job(id, mode: "sleep", key: "pay-1"))
        try await Self.waitUntil("the handler started") { setup.probe.handlesStarted == 1 }
        try setup.broker.send([Array("CIPW02".utf8), Array("CANCEL".utf8), id])
        let cancelled = try Self.result(try await setup.broker.next(), answers: id)
        #expect(cancelled.outcome == "cancelled")
        #expect(cancelled.body == ["code": "cancelled", "message": "the handler stopped: the job was cancelled"])
        #expect(setup.log.metadata(of: "job cancelled").map { $0["job"] } == [.string(WorkerLoop.hex(id))])

        // The slot was answered once: a later CANCEL of the same job changes nothing, and the worker goes on.
        try setup.broker.send([Array("CIPW02".utf8), Array("CANCEL".utf8), id])
        try setup.broker.send(Self.job(Self.jobID(8), mode: "now"))
        let next = try Self.result(try await setup.broker.next(), answers: Self.jobID(8))
        #expect(next.outcome == "stop")
        try await Self.stop(setup)
        let stopped = try #require(setup.log.metadata(of: "worker stopped").first)
        #expect(stopped["jobs-cancelled"] == "1")
        #expect(stopped["results-cancelled"] == "1")
        #expect(stopped["unfinished-jobs"] == "0")
    }

    @Test(arguments: WorkerConfiguration.JobExecution.allCases)
    func aHandlerThatFinishesDespiteTheCancelIsAnsweredWithItsResult(
        execution: WorkerConfiguration.JobExecution
    ) async throws {
        let setup = try await Self.start(execution)
        let id = Self.jobID(9)
        try setup.broker.send(Self.job(id, mode: "ignore", key: "pay-2", attempt: "2"))
        try await Self.waitUntil("the handler started") { setup.probe.handlesStarted == 1 }
        try setup.broker.send([Array("CIPW02".utf8), Array("CANCEL".utf8), id])
        let answered = try Self.result(try await setup.broker.next(), answers: id)
        #expect(answered.outcome == "stop")
        #expect(answered.body["handle"]?["code"] == "success")
        #expect(answered.body["handle"]?["data"] == ["attempt": 2, "idempotencyKey": "pay-2"])
        try await Self.stop(setup)
    }

    @Test func aCancelOfAnUnknownJobIsIgnoredAndTheWorkerStaysHealthy() async throws {
        let setup = try await Self.start(.workerThread)
        // A job runs meanwhile: a CANCEL for another id must not touch it.
        try setup.broker.send(Self.job(Self.jobID(1), mode: "sleep"))
        try await Self.waitUntil("the handler started") { setup.probe.handlesStarted == 1 }
        try setup.broker.send([Array("CIPW02".utf8), Array("CANCEL".utf8), Self.jobID(99)])
        try setup.broker.send([Array("CIPW02".utf8), Array("CANCEL".utf8), [1, 2, 3]])  // unusable: ignored
        try setup.broker.send([Array("CIPW01".utf8), Array("CANCEL".utf8), Self.jobID(1)])  // not in version 01
        try setup.broker.send(Self.job(Self.jobID(2), mode: "now", key: "k-2"))
        let healthy = try Self.result(try await setup.broker.next(), answers: Self.jobID(2))
        #expect(healthy.outcome == "stop")
        #expect(healthy.body["handle"]?["data"] == ["attempt": 1, "idempotencyKey": "k-2"])
        #expect(setup.log.metadata(of: "job cancelled").isEmpty)

        // The running job was not cancelled by any of them; a CANCEL for it now ends it.
        try setup.broker.send([Array("CIPW02".utf8), Array("CANCEL".utf8), Self.jobID(1)])
        let first = try Self.result(try await setup.broker.next(), answers: Self.jobID(1))
        #expect(first.outcome == "cancelled")
        try await Self.stop(setup)
    }
}
