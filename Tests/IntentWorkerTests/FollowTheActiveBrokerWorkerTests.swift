import IntentKit
import IntentWire
import Logging
import Testing
import ZeroMQ

@testable import IntentWorker

#if canImport(Glibc)
    import Glibc
#endif

/// A worker given several broker endpoints: a connection that completes no handshake (a standby binds nothing) makes
/// it move to the next endpoint, where it registers.
@Suite struct FollowTheActiveBrokerWorkerTests {
    @Test func aWorkerWhoseFirstEndpointIsUnboundRegistersThroughTheSecond() async throws {
        let context = ZMQContext()
        defer { context.terminate() }
        let router = try ZMQSocket(context: context, type: .router)
        defer { router.close() }
        let base = "ipc:///tmp/concierge-follow-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try router.bind("\(base)-active")
        let messages = WorkerLifecycleTests.Messages()
        let worker = Worker(
            configuration: .init(
                brokerEndpoints: ["\(base)-standby", "\(base)-active"], name: "follower",
                heartbeatInterval: .milliseconds(100), drainTimeout: .milliseconds(200)),
            provider: HandlerProvider(),
            logger: Logger(label: "test.worker") { _ in WorkerLifecycleTests.Recorder(messages: messages) })
        let run = Task { try await worker.run() }
        let started = ContinuousClock.now
        var ready: [[UInt8]]?
        var poller = ZMQPoller()
        poller.add(router)
        while ready == nil && ContinuousClock.now - started < .seconds(20) {
            // Never block a thread of the shared pool (the worker's Task and other tests need them).
            try await Task.sleep(for: .milliseconds(10))
            _ = try poller.poll(timeoutMilliseconds: 0)
            while let message = try router.receiveMultipart(dontWait: true) {
                if message.count >= 3 && message[2] == CIP.Worker.ready.bytes { ready = message }
            }
        }
        let message = try #require(ready, "no READY at the second endpoint")
        #expect(message[0] == Array("follower".utf8))
        #expect(messages.contains("moving to the next broker endpoint"))
        print("the worker registered through the second endpoint \(ContinuousClock.now - started) after it started")
        worker.stop()
        _ = await run.result
    }

    @Test func aWorkerRefusedWithDisconnectMovesToTheNextEndpoint() async throws {
        let context = ZMQContext()
        defer { context.terminate() }
        let base = "ipc:///tmp/concierge-refuse-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        // The first broker bound but refusing (it lost its journal's database): READY gets DISCONNECT.
        let refusing = try ZMQSocket(context: context, type: .router)
        defer { refusing.close() }
        try refusing.setOption(.routerHandover, 1)  // as the broker's: a worker's new connection takes its name over
        try refusing.bind("\(base)-refusing")
        let active = try ZMQSocket(context: context, type: .router)
        defer { active.close() }
        try active.bind("\(base)-active")
        let messages = WorkerLifecycleTests.Messages()
        let worker = Worker(
            configuration: .init(
                brokerEndpoints: ["\(base)-refusing", "\(base)-active"], name: "refused",
                heartbeatInterval: .milliseconds(100), drainTimeout: .milliseconds(200)),
            provider: HandlerProvider(),
            logger: Logger(label: "test.worker") { _ in WorkerLifecycleTests.Recorder(messages: messages) })
        let run = Task { try await worker.run() }
        let started = ContinuousClock.now
        var readies = 0
        var ready: [[UInt8]]?
        var poller = ZMQPoller()
        poller.add(refusing)
        poller.add(active)
        while ready == nil && ContinuousClock.now - started < .seconds(20) {
            // Never block a thread of the shared pool (the worker's Task and other tests need them).
            try await Task.sleep(for: .milliseconds(10))
            _ = try poller.poll(timeoutMilliseconds: 0)
            while let message = try refusing.receiveMultipart(dontWait: true) {
                guard message.count >= 3 && message[2] == CIP.Worker.ready.bytes else { continue }
                readies += 1
                _ = try refusing.send(multipart: [message[0], CIP.workerSignatureV2.bytes, CIP.Worker.disconnect.bytes])
            }
            while let message = try active.receiveMultipart(dontWait: true) {
                if message.count >= 3 && message[2] == CIP.Worker.ready.bytes { ready = message }
            }
        }
        #expect(ready != nil, "no READY at the second endpoint")
        #expect(readies == 1, "the refusing broker got \(readies) READYs")
        #expect(messages.contains("moving to the next broker endpoint"))
        worker.stop()
        _ = await run.result
    }

    @Test func theWorkersRotationMovesRoundRobinAfterTheHandshakeWindow() {
        var rotation = EndpointRotation(endpoints: ["a", "b"], handshakeWindow: 100)
        rotation.awaitHandshake(from: 1000)
        #expect(!rotation.handshakeOverdue(at: 1099) && rotation.handshakeOverdue(at: 1100))
        #expect(rotation.advance() == "b" && rotation.advance() == "a")
        rotation.awaitHandshake(from: 2000)
        rotation.handshakeSucceeded()
        #expect(!rotation.handshakeOverdue(at: 10_000))
    }
}
