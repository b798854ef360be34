import ConciergeTestKit
import Foundation
import IntentBroker
import IntentClient
import IntentWire
import Logging
import Synchronization
import ZeroMQ

/// Key pairs for a CURVE test, written to a directory in the files `concierge keygen` makes: the broker's, a
/// listed client's, a listed worker's and a rogue's (on no list), with the client allowlist as a file of keys and
/// the worker allowlist as a directory of `*.pub` files.
struct CurveTestKeys {
    let directory: String
    let broker: CurveKeyPair
    let client: CurveKeyPair
    let worker: CurveKeyPair
    let rogue: CurveKeyPair

    init(directory: URL) throws {
        self.directory = directory.path + "/keys"
        broker = try .generate()
        client = try .generate()
        worker = try .generate()
        rogue = try .generate()
        try CurveKeyFile.write(broker, base: path("broker"))
        try CurveKeyFile.write(client, base: path("client"))
        try CurveKeyFile.write(worker, base: path("workers/pool"))
        try CurveKeyFile.write(rogue, base: path("rogue"))
        try "# clients\n\(client.publicKey.z85)  # the test client\n".write(
            toFile: path("clients.txt"), atomically: false, encoding: .utf8
        )
    }

    func path(_ name: String) -> String { directory + "/" + name }

    /// The broker's CURVE configuration (what `--curve-secret-key`, `--client-keys`, `--worker-keys` read).
    var brokerConfiguration: BrokerCurveConfiguration {
        get throws {
            try BrokerCurveConfiguration(
                secretKeyFile: path("broker.secret"), clientKeys: path("clients.txt"), workerKeys: path("workers")
            )
        }
    }

    /// Broker flags.
    var brokerArguments: [String] {
        [
            "--curve-secret-key", path("broker.secret"), "--client-keys", path("clients.txt"), "--worker-keys",
            path("workers"),
        ]
    }

    /// Client or worker flags for the key pair at `name` (e.g. "client", "workers/pool").
    func peerArguments(_ name: String) -> [String] {
        ["--curve-server-key", path("broker.pub"), "--curve-secret-key", path(name + ".secret")]
    }

    func clientKeys(_ pair: CurveKeyPair) -> CurveClientKeys {
        CurveClientKeys(serverKey: broker.publicKey, keyPair: pair)
    }
}

/// A broker in the test process (so that its statistics and log can be read), on loopback TCP.
final class InProcessBroker: Sendable {
    let broker: Broker
    let log = LogRecorder()
    private let task: Task<Void, any Error>

    init(curve: BrokerCurveConfiguration?, configure: (inout BrokerConfiguration) -> Void = { _ in }) throws {
        var configuration = BrokerConfiguration(
            frontendEndpoint: "tcp://127.0.0.1:*", backendEndpoint: "tcp://127.0.0.1:*",
            heartbeatInterval: .milliseconds(250), shutdownGracePeriod: .milliseconds(200), curve: curve
        )
        configure(&configuration)
        let log = self.log
        broker = try Broker(
            configuration: configuration,
            logger: Logger(label: "test.broker") { _ in LogRecorder.Handler(recorder: log) }
        )
        let broker = self.broker
        task = Task { try await broker.run() }
    }

    /// Stops the broker and returns its final statistics.
    func stop() async throws -> BrokerStatistics {
        broker.stop()
        try await task.value
        return broker.statistics
    }
}

/// Collects log lines (level, message and metadata) for assertions.
final class LogRecorder: Sendable {
    private let lines = Mutex<[String]>([])

    var all: [String] { lines.withLock { $0 } }

    func contains(_ parts: String...) -> Bool {
        all.contains { line in parts.allSatisfy { line.contains($0) } }
    }

    struct Handler: LogHandler {
        let recorder: LogRecorder
        var logLevel: Logger.Level = .debug
        var metadata: Logger.Metadata = [:]

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let all = metadata.merging(event.metadata ?? [:]) { $1 }
            let text = all.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
            recorder.lines.withLock { $0.append("\(event.level) \(event.message) \(text)") }
        }
    }
}

/// A raw DEALER with optional CURVE keys and a monitor on its handshakes, speaking frames by hand (a rogue worker,
/// a client in another language).
final class RawCurvePeer {
    let context = ZMQContext()
    let socket: ZMQSocket
    let monitor: ZMQSocketMonitor

    init(endpoint: String, keys: CurveClientKeys?, routingID: String? = nil) throws {
        socket = try ZMQSocket(context: context, type: .dealer)
        if let keys { try socket.makeCurveClient(keys) }
        if let routingID { try socket.setOption(.routingID, string: routingID) }
        monitor = try ZMQSocketMonitor(context: context, watching: socket)
        try socket.connect(endpoint)
    }

    deinit {
        monitor.close()
        socket.close()
        context.terminate()
    }

    /// Sends without waiting (after a failed handshake libzmq drops the connection, and a waiting send would
    /// wait forever); false if there was no connection to queue on.
    @discardableResult
    func send(_ frames: [String]) throws -> Bool {
        try socket.send(multipart: frames.map { Array($0.utf8) })
    }

    /// The outcome of the security handshake: succeeded, or one of the failures (nil if none within 5 s).
    func handshake() throws -> ZMQMonitorEvent? {
        try monitor.next(ZMQMonitorEvent.Kind.handshakeFailures.union(.handshakeSucceeded), timeoutMilliseconds: 5000)
    }

    /// Everything that arrives within `milliseconds`.
    func receiveAll(forMilliseconds milliseconds: Int) throws -> [[String]] {
        var messages: [[String]] = []
        let end = ContinuousClock.now.advanced(by: .milliseconds(milliseconds))
        var poller = ZMQPoller()
        poller.add(socket)
        while ContinuousClock.now < end {
            try poller.poll(timeoutMilliseconds: 50)
            while let frames = try socket.receiveMultipart(dontWait: true) {
                messages.append(frames.map { String(decoding: $0, as: UTF8.self) })
            }
        }
        return messages
    }
}

/// Runs `concierge <arguments>` to completion and returns its exit status, standard output and standard error.
func runConcierge(_ arguments: [String]) throws -> (status: Int32, output: String, error: String) {
    let process = Process()
    process.executableURL = Cluster.executable
    process.arguments = arguments
    let output = Pipe()
    let error = Pipe()
    process.standardOutput = output
    process.standardError = error
    try process.run()
    let outputData = output.fileHandleForReading.readDataToEndOfFile()
    let errorData = error.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (
        process.terminationStatus, String(decoding: outputData, as: UTF8.self),
        String(decoding: errorData, as: UTF8.self)
    )
}
