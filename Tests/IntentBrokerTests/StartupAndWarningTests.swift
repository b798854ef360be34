import IntentWire
import Logging
import Synchronization
import Testing

@testable import IntentBroker

/// A starting broker lets requests for types not yet announced wait for workers (PROTOCOL.md 6.6), and warnings caused
/// by one peer are rate-limited per peer and kind while every event is still counted.
@Suite struct StartupAndWarningTests {
    @Test func requestsArrivingBeforeTheFirstWorkerWaitForTheStartupGracePeriod() throws {
        var broker = try CoreHarness(.init(startupGracePeriod: .seconds(3)))
        broker.send("early", deadlineMs: 10_000)
        #expect(broker.endings(of: "early").isEmpty)
        #expect(broker.queued == 1)
        broker.advance(ms: 1000)  // a heartbeat inside the grace period changes nothing
        broker.register("w1")
        #expect(broker.jobIDs("w1") == ["early"])
        broker.answer("w1")
        #expect(broker.endings(of: "early").map(\.status) == [.final])
    }

    @Test func afterTheStartupGracePeriodUnannouncedTypesAreUnknown() throws {
        var broker = try CoreHarness(.init(heartbeatInterval: .milliseconds(500), startupGracePeriod: .seconds(2)))
        broker.send("waits", type: "Nobody", deadlineMs: 60_000)
        broker.send("short", type: "Nobody", deadlineMs: 500)
        broker.advance(ms: 500)  // a deadline inside the grace period sheds as for any request that never started
        #expect(broker.endings(of: "short").map(\.code) == ["busy"])
        broker.advance(ms: 1500)
        #expect(broker.endings(of: "waits").map(\.code) == ["unknown-intent"])
        broker.send("late", type: "Nobody")
        broker.send("other", type: "Other")
        #expect(broker.endings(of: "late").map(\.code) == ["unknown-intent"])
        #expect(broker.endings(of: "other").map(\.code) == ["unknown-intent"])
    }

    @Test func theStartupGracePeriodCreatesABoundedNumberOfTypes() throws {
        var broker = try CoreHarness(.init(startupGracePeriod: .seconds(5)))
        broker.checkInvariants = false
        for index in 0..<(BrokerCore<[UInt8]>.maxIntentTypesAtStartup + 10) {
            broker.send("r\(index)", type: "T\(index)", deadlineMs: 60_000)
        }
        #expect(broker.core.intentTypes.count == BrokerCore<[UInt8]>.maxIntentTypesAtStartup)
        #expect(broker.replies.filter { $0.code == "unknown-intent" }.count == 10)
    }

    @Test func warningsFromOnePeerAreLoggedOncePerIntervalAndCountedInFull() throws {
        var limiter = WarningLimiter(interval: 1_000_000_000, capacity: 4)
        let peer = Array("w1".utf8)
        #expect(limiter.allow(.strayResult, peer: peer, now: 0) == 0)
        for step in 1...99 { #expect(limiter.allow(.strayResult, peer: peer, now: UInt64(step) * 1_000_000) == nil) }
        // Another kind, or another peer, has its own window.
        #expect(limiter.allow(.malformedWorkerMessage, peer: peer, now: 100_000_000) == 0)
        #expect(limiter.allow(.strayResult, peer: Array("w2".utf8), now: 100_000_000) == 0)
        // After the interval: logged again, saying how many were not.
        #expect(limiter.allow(.strayResult, peer: peer, now: 1_000_000_000) == 99)
        #expect(limiter.allow(.strayResult, peer: peer, now: 1_500_000_000) == nil)
        // Bounded: past its capacity, new peers share one slot per kind.
        for index in 0..<10 { _ = limiter.allow(.strayResult, peer: Array("p\(index)".utf8), now: 1_600_000_000) }
        #expect(limiter.trackedCount <= 5)
    }

    @Test func strayResultsFromAWorkerAreCountedEachAndLoggedOnce() throws {
        let lines = LogLines()
        var logger = Logger(label: "test") { _ in lines }
        logger.logLevel = .warning
        var core = try BrokerCore<[UInt8]>(configuration: .init(), logger: logger, now: 1_000_000_000)
        let ready = WorkerReady(capacity: 1, name: Array("w1".utf8), intentTypes: [Array("Echo".utf8)])
        core.workerMessage(.ready(ready), from: Array("w1".utf8), resultBody: nil, now: 1_000_000_000)
        for job in 0..<1000 {
            let result = WorkerResult(jobID: UInt64(1000 + job), outcome: .stop, bodySize: 1)
            core.workerMessage(
                .result(result), from: Array("w1".utf8), resultBody: [0x7B], now: 1_000_000_000 + UInt64(job))
        }
        #expect(core.statistics.strayResults == 1000)
        #expect(lines.count(containing: "dropped a result") == 1)
    }
}

/// A log handler that keeps the messages it is given (thread-safe).
final class LogLines: LogHandler, Sendable {
    private let messages = Mutex<[String]>([])
    var metadata: Logger.Metadata {
        get { [:] }
        set {}
    }
    var logLevel: Logger.Level {
        get { .trace }
        set {}
    }
    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { nil }
        set {}
    }

    func log(event: LogEvent) {
        messages.withLock { $0.append(event.message.description) }
    }

    func count(containing text: String) -> Int { messages.withLock { $0.filter { $0.contains(text) }.count } }
}
