import IntentKit
import IntentWorkerLifecycle
import Logging
import ServiceLifecycle
import Testing

@testable import IntentWorker

#if canImport(Glibc)
    import Glibc
#endif

/// How a worker is asked to drain without swift-service-lifecycle in IntentWorker (issue 45): ``Worker/stop()`` and
/// cancellation of the task running ``Worker/run()`` drain it, and with IntentWorkerLifecycle a `ServiceGroup`'s
/// graceful shutdown does (the `Service` conformance ties it to the drain), as does ``ParentWatch`` returning when
/// the pool is gone. Each drain is seen on the wire: DRAIN, the broker's acknowledgement, DISCONNECT, then `run()`
/// returns. Every wait is bounded.
@Suite(.serialized, .timeLimit(.minutes(3))) struct WorkerServiceTests {
    typealias Broker = WorkerVersion2Tests.ScriptedBroker

    static let quiet = Logger(label: "test.worker-service") { _ in SwiftLogNoOpLogHandler() }

    static func worker(_ broker: Broker) -> Worker {
        Worker(
            configuration: .init(
                brokerEndpoint: broker.endpoint, name: "svc", heartbeatInterval: .seconds(5), drainTimeout: .seconds(20)
            ),
            provider: HandlerProvider(), logger: quiet)
    }

    /// Waits for the worker's DRAIN, acknowledges it, and waits for its DISCONNECT.
    static func expectDrain(_ broker: Broker) async throws {
        #expect(WorkerVersion2Tests.text(try await broker.next()) == ["CIPW06", "DRAIN"])
        try broker.send(["CIPW02", "DRAIN"])
        #expect(WorkerVersion2Tests.text(try await broker.next()) == ["CIPW06", "DISCONNECT"])
    }

    @Test func aServiceGroupsGracefulShutdownDrainsTheWorker() async throws {
        let broker = try Broker()
        defer { broker.close() }
        let worker = Self.worker(broker)
        let group = ServiceGroup(services: [worker], gracefulShutdownSignals: [], logger: Self.quiet)
        let run = Task { try await group.run() }
        #expect(WorkerVersion2Tests.text(try await broker.next()).prefix(2) == ["CIPW06", "READY"])
        await group.triggerGracefulShutdown()
        try await Self.expectDrain(broker)
        try await run.value
    }

    @Test func cancellingTheTaskThatRunsTheWorkerDrainsIt() async throws {
        let broker = try Broker()
        defer { broker.close() }
        let worker = Self.worker(broker)
        let run = Task { try await worker.run() }
        #expect(WorkerVersion2Tests.text(try await broker.next()).prefix(2) == ["CIPW06", "READY"])
        run.cancel()
        try await Self.expectDrain(broker)
        try await run.value
    }

    @Test func theParentWatchEndingShutsTheGroupDownAndDrainsTheWorker() async throws {
        let broker = try Broker()
        defer { broker.close() }
        let worker = Self.worker(broker)
        // A pool pid that is not this process's parent: the watch finds the pool gone at its first look.
        let watch = ParentWatch(environment: ["CONCIERGE_POOL_PID": "\(getppid() + 1)"], logger: Self.quiet)
        let group = ServiceGroup(
            configuration: .init(
                services: [
                    .init(service: worker), .init(service: watch, successTerminationBehavior: .gracefullyShutdownGroup),
                ],
                logger: Self.quiet))
        let run = Task { try await group.run() }
        try await Self.expectDrainAfterReady(broker)
        try await run.value
    }

    /// READY (sent at once, whatever the watch does), then the drain.
    static func expectDrainAfterReady(_ broker: Broker) async throws {
        #expect(WorkerVersion2Tests.text(try await broker.next()).prefix(2) == ["CIPW06", "READY"])
        try await expectDrain(broker)
    }

    @Test func theParentWatchReturnsTrueOnlyWhenThePoolIsGone() async throws {
        let gone = ParentWatch(environment: ["CONCIERGE_POOL_PID": "\(getppid() + 1)"], logger: Self.quiet)
        #expect(await gone.waitUntilPoolGone())

        for environment in [["CONCIERGE_POOL_PID": "\(getppid())"], [:]] {
            let watch = ParentWatch(environment: environment, logger: Self.quiet)
            let waiting = Task { await watch.waitUntilPoolGone() }
            try await Task.sleep(for: .milliseconds(600))  // more than one look (every 500 ms)
            waiting.cancel()
            #expect(await waiting.value == false, "\(environment)")
        }
    }
}

/// The FIFO behind `WorkerThreadExecutor`: first in, first out through growth, interleaving and compaction.
@Suite struct FIFOQueueTests {
    @Test func elementsLeaveInTheOrderTheyCameThroughInterleavingAndCompaction() {
        var queue = FIFOQueue<Int>()
        #expect(queue.isEmpty && queue.popFirst() == nil)
        var expected: [Int] = []
        var next = 0
        var taken: [Int] = []
        // Two in, one out, for long enough that the taken front is dropped many times; then empty it.
        for _ in 0..<1_000 {
            for _ in 0..<2 {
                queue.append(next)
                expected.append(next)
                next += 1
            }
            taken.append(queue.popFirst()!)
            #expect(queue.count == expected.count - taken.count)
        }
        while let element = queue.popFirst() { taken.append(element) }
        #expect(taken == expected)
        #expect(queue.isEmpty && queue.count == 0 && queue.popFirst() == nil)
        // Usable again after emptying.
        queue.append(7)
        queue.append(8)
        #expect(queue.popFirst() == 7 && queue.popFirst() == 8 && queue.isEmpty)
    }

    @Test func aTakenElementIsNotKeptAlive() {
        final class Box {}
        weak var first: Box?
        var queue = FIFOQueue<Box>()
        do {
            let box = Box()
            first = box
            queue.append(box)
            queue.append(Box())
        }
        _ = queue.popFirst()
        #expect(first == nil)
        #expect(queue.count == 1)
    }
}
