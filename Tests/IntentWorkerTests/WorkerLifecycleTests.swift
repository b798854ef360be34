import IntentKit
import Logging
import Synchronization
import Testing
import ZeroMQ

@testable import IntentWorker

#if canImport(Glibc)
    import Glibc
#endif

/// A worker's `run()`: once only, and a failure of its socket loop reaches the caller (the ServiceGroup) as an
/// error instead of looking like a normal stop. No broker is needed: the worker connects to an endpoint nobody
/// binds.
@Suite struct WorkerLifecycleTests {
    final class Messages: Sendable {
        private let list = Mutex<[String]>([])
        func append(_ message: String) { list.withLock { $0.append(message) } }
        func contains(_ text: String) -> Bool { list.withLock { $0.contains { $0.contains(text) } } }
    }

    struct Recorder: LogHandler {
        let messages: Messages
        var logLevel: Logger.Level = .info
        var metadata: Logger.Metadata = [:]
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(event: LogEvent) { messages.append(event.message.description) }
    }

    static func worker(_ messages: Messages) -> Worker {
        let endpoint = "ipc:///tmp/concierge-nobody-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        return Worker(
            configuration: .init(brokerEndpoint: endpoint, name: "lonely", heartbeatInterval: .milliseconds(100)),
            provider: HandlerProvider(),
            logger: Logger(label: "test.worker") { _ in Recorder(messages: messages) })
    }

    /// How `task` ended, or nil if it had not within `limit`.
    static func outcome(of task: Task<Void, any Error>, within limit: Duration) async -> Result<Void, any Error>? {
        await withTaskGroup(of: Result<Void, any Error>?.self) { group in
            group.addTask { await task.result }
            group.addTask {
                try? await Task.sleep(for: limit)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }

    static func waitUntilRegistering(_ messages: Messages) async throws {
        let clock = ContinuousClock()
        let end = clock.now + .seconds(20)
        while !messages.contains("worker registering") {
            try #require(clock.now < end, "the worker never started")
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    @Test func aPollFailureEndsRunWithAnErrorNotANormalStop() async throws {
        let messages = Messages()
        let worker = Self.worker(messages)
        let run = Task { try await worker.run() }
        try await Self.waitUntilRegistering(messages)
        worker.loop.context.shutdown()  // from now on zmq_poll on the worker's socket fails with ETERM
        let outcome = try #require(await Self.outcome(of: run, within: .seconds(20)), "run() did not end")
        guard case .failure(let error) = outcome else {
            Issue.record("run() ended without an error")
            return
        }
        #expect((error as? WorkerError)?.code == .pollFailed, "\(error)")
    }

    @Test func runRunsOnceAndASecondCallThrowsAlreadyRan() async throws {
        let messages = Messages()
        let worker = Self.worker(messages)
        let run = Task { try await worker.run() }
        try await Self.waitUntilRegistering(messages)
        await #expect(throws: WorkerError.self) { try await worker.run() }
        worker.stop()  // drains; with no broker it leaves once the broker counts as silent (300 ms)
        let outcome = try #require(await Self.outcome(of: run, within: .seconds(20)), "run() did not end")
        if case .failure(let error) = outcome { Issue.record("the first run failed: \(error)") }
    }
}
