import Foundation
import Logging
import Synchronization
import Testing
import ZeroMQ

@testable import IntentBroker

#if canImport(Glibc)
    import Glibc
#endif

/// The broker's own lifecycle, with real sockets on loopback TCP: dropping a broker that never ran returns at once
/// and frees its endpoints, `run()` runs once, and a poll failure ends `run()` with an error.
///
/// Every wait is bounded, so a regression fails the test instead of hanging the runner.
@Suite struct BrokerLifecycleTests {
    static let quiet = Logger(label: "test.broker") { _ in SwiftLogNoOpLogHandler() }

    static func configuration(curve: BrokerCurveConfiguration? = nil) -> BrokerConfiguration {
        BrokerConfiguration(
            frontendEndpoint: "tcp://127.0.0.1:*", backendEndpoint: "tcp://127.0.0.1:*",
            shutdownGracePeriod: .milliseconds(50), shutdownLinger: .milliseconds(50), startupGracePeriod: .zero,
            curve: curve
        )
    }

    @Test func aBrokerDroppedWithoutRunningReturnsPromptlyAndFreesItsEndpoints() throws {
        let endpoints = Shared<[String]>([])
        let returned = try finishes(within: .seconds(10)) {
            let broker = try Broker(configuration: Self.configuration(), logger: Self.quiet)
            endpoints.value = [broker.frontendEndpoint, broker.backendEndpoint]
        }
        try #require(returned, "dropping a broker that never ran did not return")
        var again = Self.configuration()
        again.frontendEndpoint = endpoints.value[0]
        again.backendEndpoint = endpoints.value[1]
        _ = try Broker(configuration: again, logger: Self.quiet)
    }

    @Test func aCurveBrokerDroppedWithoutRunningStopsItsZAPHandlerAndEndsItsContext() throws {
        let secret = try CurveKeyPair.generate().secretKey
        let client = try CurveKeyPair.generate().publicKey
        let curve = BrokerCurveConfiguration(secretKey: secret, clientKeys: [client], workerKeys: [client])
        let context = Shared(Weak<ZMQContext>())
        let returned = try finishes(within: .seconds(10)) {
            let broker = try Broker(configuration: Self.configuration(curve: curve), logger: Self.quiet)
            context.value.object = broker.loop.sockets!.context
        }
        try #require(returned, "dropping a CURVE broker that never ran did not return")
        // The ZAP thread held its handler, whose socket holds the context: the context ends once that thread is gone.
        let clock = ContinuousClock()
        let end = clock.now + .seconds(10)
        while context.value.object != nil && clock.now < end { usleep(10_000) }
        #expect(context.value.object == nil, "the ZAP handler of a broker that never ran kept the context alive")
    }

    @Test func runRunsOnceAndASecondCallThrowsAlreadyRan() async throws {
        let log = Shared<[String]>([])
        let logger = Logger(label: "test.broker") { _ in MessageRecorder(messages: log) }
        let broker = try Broker(configuration: Self.configuration(), logger: logger)
        let first = Task { try await broker.run() }
        // While the first run() runs (its loop has logged that it is ready).
        try #require(try await eventually(within: .seconds(10)) { log.value.contains("broker ready") })
        let second = try await result(of: Task { try await broker.run() }, within: .seconds(10))
        #expect((second?.failure as? BrokerError)?.code == .alreadyRan, "\(String(describing: second))")
        broker.stop()
        let firstResult = try #require(try await result(of: first, within: .seconds(20)), "run() did not stop")
        #expect(firstResult.failure == nil)
        // After it ended.
        let third = try await result(of: Task { try await broker.run() }, within: .seconds(10))
        #expect((third?.failure as? BrokerError)?.code == .alreadyRan, "\(String(describing: third))")
    }

    @Test func runOnThisThreadServesUntilStoppedAndRunsOnce() async throws {
        let log = Shared<[String]>([])
        let logger = Logger(label: "test.broker") { _ in MessageRecorder(messages: log) }
        let broker = try Broker(configuration: Self.configuration(), logger: logger)
        let outcome = Shared<Result<Void, BrokerError>?>(nil)
        let thread = Thread {
            do throws(BrokerError) {
                try broker.runOnThisThread()
                outcome.value = .success(())
            } catch {
                outcome.value = .failure(error)
            }
        }
        thread.start()
        try #require(try await eventually(within: .seconds(10)) { log.value.contains("broker ready") })
        // The async entry point refuses a broker already running on a thread.
        let second = try await result(of: Task { try await broker.run() }, within: .seconds(10))
        #expect((second?.failure as? BrokerError)?.code == .alreadyRan, "\(String(describing: second))")
        broker.stop()
        _ = try await eventually(within: .seconds(20)) { outcome.value != nil }
        let ended = try #require(outcome.value, "runOnThisThread() did not return after stop()")
        if case .failure(let error) = ended { Issue.record("runOnThisThread() threw \(error)") }
    }

    @Test func aPollFailureEndsRunWithAnErrorNotANormalStop() async throws {
        let broker = try Broker(configuration: Self.configuration(), logger: Self.quiet)
        let run = Task { try await broker.run() }
        // From now on zmq_poll on the broker's sockets fails with ETERM.
        broker.loop.sockets!.context.shutdown()
        let outcome = try #require(try await result(of: run, within: .seconds(20)), "run() did not end")
        let error = try #require(outcome.failure as? BrokerError, "run() ended without an error: \(outcome)")
        #expect(error.code == .pollFailed)
        #expect(error.message.contains("\(ZMQError.terminated.code)"))
    }
}

/// Keeps the messages logged.
struct MessageRecorder: LogHandler {
    let messages: Shared<[String]>
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        messages.update { $0.append(event.message.description) }
    }
}

extension Result {
    /// The error, if this is a failure.
    var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}

/// The result of `task` if it ends within `limit`; nil if it does not (it is then cancelled and left behind).
func result<Success: Sendable>(
    of task: Task<Success, any Error>,
    within limit: Duration
) async throws -> Result<Success, any Error>? {
    try await withThrowingTaskGroup(of: Result<Success, any Error>?.self) { group in
        group.addTask { await task.result }
        group.addTask {
            try await Task.sleep(for: limit)
            return nil
        }
        let first = try await group.next()!
        group.cancelAll()
        if first == nil { task.cancel() }
        return first
    }
}

/// A value threads share.
/// Whether `condition` held within `limit`, asked every 5 ms (a bounded wait on observable state).
func eventually(within limit: Duration, _ condition: () -> Bool) async throws -> Bool {
    let end = ContinuousClock.now + limit
    while !condition() {
        guard ContinuousClock.now < end else { return false }
        try await Task.sleep(for: .milliseconds(5))
    }
    return true
}

final class Shared<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>
    init(_ value: Value) { mutex = Mutex(value) }
    var value: Value {
        get { mutex.withLock { $0 } }
        set { mutex.withLock { $0 = newValue } }
    }
    func update(_ body: (inout Value) -> Void) { mutex.withLock { body(&$0) } }
}

/// A weak reference (to watch an object go away).
struct Weak<Object: AnyObject & Sendable>: Sendable {
    weak var object: Object?
}

/// Runs `body` on a thread of its own and waits at most `limit` for it; false if it did not finish in time (the
/// thread is then left behind rather than hanging the test runner). An error `body` throws is recorded.
func finishes(within limit: Duration, _ body: @escaping @Sendable () throws -> Void) throws -> Bool {
    let done = EventFD()
    let finished = Shared(false)
    SocketThread.start(name: "test-bounded") {
        do { try body() } catch { Issue.record(error) }
        finished.value = true
        done.signal()
    }
    let clock = ContinuousClock()
    let end = clock.now + limit
    var poller = ZMQPoller()
    poller.add(fileDescriptor: done.fileDescriptor)
    while !finished.value {
        let left = clock.now.duration(to: end)
        guard left > .zero else { return false }
        try poller.poll(timeoutMilliseconds: Int(left.components.seconds) * 1000 + 10)
        done.drain()
    }
    return true
}
