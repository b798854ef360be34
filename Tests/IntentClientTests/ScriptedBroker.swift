import Foundation
import IntentWire
import Synchronization
import ZeroMQ

/// A stand-in for the broker's frontend, for testing the client library alone: a ROUTER on a private `ipc://`
/// endpoint, on a thread of its own. It answers PING with PONG, records every other message it gets (the frames
/// after the routing id), and sends what the test queues with ``send(_:)``.
final class ScriptedBroker: Sendable {
    let endpoint: String
    private let directory: URL
    private let received = Mutex<[[[UInt8]]]>([])
    private let outbox = Mutex<[[[UInt8]]]>([])
    /// The client's routing id, once it sent something.
    private let peer = Mutex<[UInt8]?>(nil)
    private let stopping = Atomic<Bool>(false)
    private let stopped = Atomic<Bool>(false)
    private let context = ZMQContext()
    private let router: ZMQSocket

    init() throws {
        directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("concierge-client-test-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        endpoint = "ipc://\(directory.path)/frontend"
        router = try ZMQSocket(context: context, type: .router)
        try router.bind(endpoint)
        SocketThread.start(name: "scripted-broker") { [self] in loop() }
    }

    /// Every message received so far (PINGs left out), without the routing id.
    var messages: [[[UInt8]]] { received.withLock { $0 } }

    /// The messages received with command `command` (F1).
    func messages(_ command: StaticString) -> [[[UInt8]]] {
        messages.filter { $0.count >= 2 && $0[1] == command.bytes }
    }

    /// Waits (at most `timeout`) until `count` messages with command `command` came; returns them all.
    @discardableResult
    func waitFor(
        _ command: StaticString, count: Int = 1, timeout: Duration = .seconds(10)
    ) async throws -> [[[UInt8]]] {
        let end = ContinuousClock.now + timeout
        while messages(command).count < count {
            guard ContinuousClock.now < end else {
                throw BrokerWaitTimedOut(
                    description: "\(command): \(messages(command).count) of \(count) in \(timeout)")
            }
            try await Task.sleep(for: .milliseconds(5))
        }
        return messages(command)
    }

    /// Queues a message to the client (the frames after the routing id).
    func send(_ frames: [[UInt8]]) {
        outbox.withLock { $0.append(frames) }
    }

    /// Queues a REPLY (version 02, F6 empty) to request `id`.
    func reply(_ id: [UInt8], status: StaticString, phase: String = "handle", body: String) {
        send([
            CIP.clientSignatureV2.bytes, CIP.Broker.reply.bytes, id, status.bytes, Array(phase.utf8),
            Array(body.utf8), [],
        ])
    }

    /// Queues an error REPLY with `code` to request `id`.
    func replyError(_ id: [UInt8], code: WireErrorCode) {
        reply(id, status: CIP.Status.error, body: #"{"code":"\#(code.rawValue)","message":"scripted"}"#)
    }

    /// Queues a STATUS answer (version 02) about `id`.
    func status(_ id: [UInt8], status: StaticString, phase: String = "", body: String) {
        send([
            CIP.clientSignatureV2.bytes, CIP.Broker.status.bytes, id, status.bytes, Array(phase.utf8),
            Array(body.utf8), [],
        ])
    }

    func stop() {
        stopping.store(true, ordering: .sequentiallyConsistent)
        let end = ContinuousClock.now + .seconds(5)
        while !stopped.load(ordering: .sequentiallyConsistent) && ContinuousClock.now < end { usleep(2_000) }
        try? FileManager.default.removeItem(at: directory)
    }

    /// Sends what the test queued.
    private func flush() throws {
        guard let connection = peer.withLock({ $0 }) else { return }
        let queued = outbox.withLock { outbox in
            defer { outbox.removeAll() }
            return outbox
        }
        for frames in queued { try router.send(multipart: [connection] + frames) }
    }

    private func loop() {
        defer {
            router.close()
            context.terminate()
            stopped.store(true, ordering: .sequentiallyConsistent)
        }
        var poller = ZMQPoller()
        poller.add(router)
        do {
            while !stopping.load(ordering: .sequentiallyConsistent) {
                try flush()
                try poller.poll(timeoutMilliseconds: 5)
                while let message = try router.receiveMultipart(dontWait: true) {
                    guard message.count >= 3 else { continue }
                    peer.withLock { $0 = message[0] }
                    let frames = Array(message.dropFirst())
                    if frames[1] == CIP.Client.ping.bytes {
                        // What the test queued before the client pinged goes out before the PONG.
                        try flush()
                        try router.send(multipart: [message[0], frames[0], CIP.Broker.pong.bytes])
                    } else {
                        received.withLock { $0.append(frames) }
                    }
                }
            }
        } catch {
            // The context or socket went away: the test is over.
        }
    }
}

struct BrokerWaitTimedOut: Error, CustomStringConvertible {
    let description: String
}

/// Waits until `condition` holds (at most 10 s), looking every 5 ms.
func waitUntil(_ what: String, _ condition: () -> Bool) async throws {
    let end = ContinuousClock.now + .seconds(10)
    while !condition() {
        guard ContinuousClock.now < end else { throw BrokerWaitTimedOut(description: "timed out: \(what)") }
        try await Task.sleep(for: .milliseconds(5))
    }
}
