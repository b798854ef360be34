public import ConciergeJSON
public import Foundation
public import IntentClient
import IntentWire

/// Starts real `concierge` processes (broker, workers, pools) on private `ipc://` endpoints for tests and
/// benchmarks, and stops every one of them by pid when it goes away (or on ``stopAll()``).
///
/// The `concierge` executable is found next to the running test bundle (`.build/<triple>/debug`), or at
/// `$CONCIERGE_EXECUTABLE`.
public final class Cluster: @unchecked Sendable {
    public let directory: URL
    public let frontend: String
    public let backend: String
    public let control: String
    public private(set) var processes: [String: Process] = [:]
    private let lock = NSLock()

    /// The built `concierge` executable, next to the test bundle.
    public static var executable: URL {
        if let path = ProcessInfo.processInfo.environment["CONCIERGE_EXECUTABLE"] {
            return URL(fileURLWithPath: path)
        }
        var url = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        while !FileManager.default.fileExists(atPath: url.appendingPathComponent("concierge").path),
            url.path != "/"
        {
            url = url.deletingLastPathComponent()
        }
        return url.appendingPathComponent("concierge")
    }

    /// The slim worker executable, `concierge-worker`, built next to `concierge`.
    public static var slimWorkerExecutable: URL {
        executable.deletingLastPathComponent().appendingPathComponent("concierge-worker")
    }

    public init() throws {
        directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("concierge-test-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        frontend = "ipc://\(directory.path)/frontend"
        backend = "ipc://\(directory.path)/backend"
        control = "ipc://\(directory.path)/control"
    }

    deinit {
        stopAll()
        try? FileManager.default.removeItem(at: directory)
    }

    /// Starts `concierge <arguments>` (or another `executable`) and remembers it under `name`; its stderr goes to
    /// `<dir>/<name>.log`.
    @discardableResult
    public func start(
        _ name: String, _ arguments: [String], environment: [String: String] = [:], executable: URL = Cluster.executable
    ) throws -> Process {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        for (key, value) in environment { env[key] = value }
        process.environment = env
        let log = directory.appendingPathComponent("\(name).log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        let handle = try FileHandle(forWritingTo: log)
        process.standardError = handle
        process.standardOutput = handle
        try process.run()
        lock.withLock { processes[name] = process }
        return process
    }

    public func startBroker(_ extra: [String] = []) throws {
        try start("broker", ["broker", "--frontend", frontend, "--backend", backend, "--heartbeat-ms", "250"] + extra)
    }

    public func startWorker(_ name: String, capacity: Int = 4, _ extra: [String] = []) throws {
        try start(
            name,
            ["worker", "--broker", backend, "--name", name, "--capacity", String(capacity), "--heartbeat-ms", "250"]
                + extra
        )
    }

    public func startPool(workers: Int) throws {
        try start(
            "pool",
            [
                "pool", "--broker", backend, "--workers", String(workers), "--control", control,
                "--heartbeat-ms", "250", "--capacity", "4",
            ]
        )
    }

    public func pid(_ name: String) -> Int32 { lock.withLock { processes[name]?.processIdentifier ?? 0 } }

    public func signal(_ name: String, _ signal: Int32) {
        let pid = pid(name)
        if pid > 0 { kill(pid, signal) }
    }

    /// Waits for a process to exit; returns its status, or nil if it is still running after `seconds`.
    public func waitForExit(_ name: String, seconds: Double = 20) async -> Int32? {
        guard let process = lock.withLock({ processes[name] }) else { return nil }
        let end = Date().addingTimeInterval(seconds)
        while process.isRunning && Date() < end { try? await Task.sleep(for: .milliseconds(50)) }
        return process.isRunning ? nil : process.terminationStatus
    }

    public func log(_ name: String) -> String {
        (try? String(contentsOf: directory.appendingPathComponent("\(name).log"), encoding: .utf8)) ?? ""
    }

    public func stopAll() {
        let all = lock.withLock { processes }
        // Pools first and gently, so that they stop their workers; then everything that is left, by pid.
        if let pool = all["pool"], pool.isRunning {
            kill(pool.processIdentifier, SIGTERM)
            let end = Date().addingTimeInterval(10)
            while pool.isRunning && Date() < end { usleep(20_000) }
        }
        for process in all.values where process.isRunning { kill(process.processIdentifier, SIGKILL) }
        for process in all.values { process.waitUntilExit() }
    }

    public func client() throws -> ConciergeClient {
        try ConciergeClient(configuration: .init(brokerEndpoint: frontend, heartbeatInterval: .milliseconds(250)))
    }

    /// Sends Echo requests until one succeeds (the broker is up and a worker has registered), up to `seconds`.
    public func waitUntilServing(_ client: ConciergeClient, intent: String = "Echo", seconds: Double = 30) async throws
    {
        let end = Date().addingTimeInterval(seconds)
        while Date() < end {
            let probe: JSONValue = ["type": .string(intent), "parameters": [:]]
            if let reply = try? await client.request(intent: probe, phase: .resolve),
                reply.status == .final
            {
                return
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw ClusterError(message: "nothing served \(intent) within \(seconds) s\nbroker log:\n\(log("broker"))")
    }

    /// Collects all replies of one request.
    public static func replies(_ stream: ConciergeClient.ReplyStream) async throws -> [Reply] {
        var replies: [Reply] = []
        for try await reply in stream { replies.append(reply) }
        return replies
    }
}

/// A cluster did not come up in time.
public struct ClusterError: Error, CustomStringConvertible {
    public let message: String
    public var description: String { message }
}

extension Reply {
    /// The body as JSON, or `.null`.
    public var body_: JSONValue { json ?? .null }
}
