import ConciergeJSON
import Foundation
public import IntentTranscript
import IntentWire
import ZeroMQ

#if canImport(Glibc)
    import Glibc
#endif

/// A worker executable run for a replay, without any broker: the replay binds a ROUTER on a private `ipc://` path,
/// starts the executable with `--broker <that endpoint>` (and `CONCIERGE_BROKER` in its environment), waits for its
/// READY, and plays the broker's part for one JOB at a time: each recorded phase is sent as a JOB of that one phase,
/// with the recorded input as its body, in the version the worker registered with.
///
/// Not `Sendable`: one task drives it, from ``start(executable:arguments:readyWithin:)`` to ``stop()``. Always call
/// ``stop()``: it sends DISCONNECT, stops the process by its pid (SIGTERM, answering its DRAIN, then SIGKILL after
/// 5 s) and removes the temporary directory.
///
/// ```swift
/// let worker = try await ReplayWorkerProcess.start(executable: ".build/debug/concierge-worker")
/// let report = try await transcript.replayPhases { intentType, phase in
///     try await worker.run(phase, intentType: intentType)
/// }
/// await worker.stop()
/// ```
public final class ReplayWorkerProcess {
    /// The worker's name (its routing id), from its READY.
    public private(set) var name = ""
    /// The intent types it announced.
    public private(set) var intentTypes: [String] = []
    /// Its worker protocol version (1 to 4).
    public private(set) var version: UInt8 = 1
    /// How long each JOB may take before ``run(_:intentType:)`` gives up.
    public var jobTimeout: Duration = .seconds(30)

    private let context = ZMQContext()
    private let socket: ZMQSocket
    private let directory: URL
    private let process = Process()
    private var routingID: [UInt8] = []
    private var nextJobID: UInt64 = 0
    private var stopped = false

    private init(directory: URL) throws(ReplayTargetError) {
        self.directory = directory
        do {
            socket = try ZMQSocket(context: context, type: .router)
            try socket.setOption(.linger, 0)
            try socket.bind("ipc://" + directory.appendingPathComponent("backend").path)
        } catch {
            throw ReplayTargetError(code: .io, message: "cannot bind the replay's backend socket: \(error)")
        }
    }

    deinit {
        if !stopped {
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            socket.close()
            context.terminate()
            try? FileManager.default.removeItem(at: directory)
        }
    }

    /// The endpoint the worker connects to.
    public var endpoint: String { "ipc://" + directory.appendingPathComponent("backend").path }

    /// The worker's standard output and error so far.
    public var log: String {
        (try? String(contentsOf: directory.appendingPathComponent("worker.log"), encoding: .utf8)) ?? ""
    }

    /// Starts `executable` with `--broker <endpoint>` followed by `arguments`, and waits for its READY.
    /// - Throws: ``ReplayTargetError`` `worker-not-ready` (with the end of its log) when it cannot be started, exits,
    ///   or sends no READY within `limit`; `io` when the socket cannot be bound.
    public static func start(
        executable: String, arguments: [String] = [], readyWithin limit: Duration = .seconds(30)
    ) async throws(ReplayTargetError) -> ReplayWorkerProcess {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("concierge-replay-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw ReplayTargetError(code: .io, message: "cannot create \(directory.path): \(error)")
        }
        let worker = try ReplayWorkerProcess(directory: directory)
        do {
            try worker.launch(executable: executable, arguments: arguments)
            try await worker.waitForReady(within: limit)
        } catch {
            await worker.stop()
            throw error
        }
        return worker
    }

    private func launch(executable: String, arguments: [String]) throws(ReplayTargetError) {
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = ["--broker", endpoint] + arguments
        var environment = ProcessInfo.processInfo.environment
        environment["CONCIERGE_BROKER"] = endpoint
        process.environment = environment
        let logPath = directory.appendingPathComponent("worker.log")
        _ = FileManager.default.createFile(atPath: logPath.path, contents: nil)
        do {
            let handle = try FileHandle(forWritingTo: logPath)
            process.standardOutput = handle
            process.standardError = handle
            try process.run()
        } catch {
            throw ReplayTargetError(code: .workerNotReady, message: "cannot start \(executable): \(error)")
        }
    }

    private func waitForReady(within limit: Duration) async throws(ReplayTargetError) {
        let end = ContinuousClock.now + limit
        while ContinuousClock.now < end {
            guard process.isRunning else {
                throw ReplayTargetError(
                    code: .workerNotReady,
                    message: "the worker exited (status \(process.terminationStatus)) before READY; its log:\n"
                        + Self.tail(log))
            }
            if let message = try receive(), case .ready(let ready) = message.command {
                routingID = message.routingID
                name = ready.nameString
                intentTypes = ready.intentTypes.map { String(decoding: $0, as: UTF8.self) }
                version = ready.version
                return
            }
            await pause()
        }
        throw ReplayTargetError(
            code: .workerNotReady, message: "no READY from the worker within \(limit); its log:\n" + Self.tail(log))
    }

    /// Runs one recorded phase as a JOB of that phase alone, with the recorded input as its body, and returns the
    /// RESULT (attempt 1, no idempotency key, 30 s to the deadline).
    /// - Throws: ``ReplayTargetError`` `worker-gone`, `no-answer` (after ``jobTimeout``), `protocol-error`,
    ///   `not-replayable` (a phase the wire does not know).
    public func run(_ phase: TranscriptRecord.Phase, intentType: String) async throws(ReplayTargetError)
        -> TranscriptPhaseAnswer
    {
        guard let jobPhase = RequestPhase(phase.phase), jobPhase != .lifecycle else {
            throw ReplayTargetError(code: .notReplayable, message: "no phase \"\(phase.phase)\"")
        }
        nextJobID += 1
        let jobID = withUnsafeBytes(of: nextJobID) { Array($0) }
        do {
            var sink = ZMQWaitingSink(socket)
            _ = try BrokerMessageEncoder.job(
                into: &sink, to: routingID, version: version, jobID: jobID, intentType: intentType, phase: jobPhase,
                timeLeftMilliseconds: 30_000, body: .bytes(phase.input.serialized()))
        } catch {
            throw ReplayTargetError(code: .io, message: "cannot send the JOB: \(error)")
        }
        let end = ContinuousClock.now + jobTimeout
        while ContinuousClock.now < end {
            guard process.isRunning else {
                throw ReplayTargetError(
                    code: .workerGone,
                    message: "the worker exited (status \(process.terminationStatus)); its log:\n" + Self.tail(log))
            }
            if let message = try receive() {
                switch message.command {
                case .result(let result) where result.jobID == nextJobID:
                    let body = message.frames[WorkerResult.bodyIndex]
                    let output = (try? JSONValue.parse(body)) ?? .string(String(decoding: body, as: UTF8.self))
                    return TranscriptPhaseAnswer(outcome: result.outcome.rawValue, output: output)
                case .disconnect:
                    throw ReplayTargetError(code: .workerGone, message: "the worker sent DISCONNECT")
                default:
                    break  // a late RESULT of an earlier job, a HEARTBEAT (answered), a READY again
                }
            }
            await pause()
        }
        throw ReplayTargetError(code: .noAnswer, message: "no RESULT for the \(phase.phase) job within \(jobTimeout)")
    }

    /// Sends DISCONNECT, stops the process (SIGTERM by pid; its DRAIN is acknowledged; SIGKILL if it has not exited
    /// within 5 s), waits for it, and removes the temporary directory. Calling it again does nothing.
    public func stop() async {
        guard !stopped else { return }
        stopped = true
        if !routingID.isEmpty {
            var sink = ZMQWaitingSink(socket)
            _ = try? BrokerMessageEncoder.disconnect(into: &sink, to: routingID, version: version)
        }
        if process.processIdentifier > 0 && process.isRunning {
            kill(process.processIdentifier, SIGTERM)
            let end = ContinuousClock.now + .seconds(5)
            while process.isRunning && ContinuousClock.now < end {
                // A draining worker waits for the broker's DRAIN before it goes.
                if let message = try? receive(), case .drain = message.command {
                    var sink = ZMQWaitingSink(socket)
                    _ = try? BrokerMessageEncoder.drain(into: &sink, to: message.routingID, version: version)
                }
                await pause()
            }
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        }
        if process.processIdentifier > 0 { process.waitUntilExit() }
        socket.close()
        context.terminate()
        try? FileManager.default.removeItem(at: directory)
    }

    /// One decoded message from the worker, HEARTBEATs answered.
    private struct Message {
        let routingID: [UInt8]
        let frames: [[UInt8]]
        let command: WorkerCommand
    }

    private func receive() throws(ReplayTargetError) -> Message? {
        let message: [[UInt8]]?
        do {
            message = try socket.receiveMultipart(dontWait: true)
        } catch {
            throw ReplayTargetError(code: .io, message: "cannot receive: \(error)")
        }
        guard let message, message.count >= 2 else { return nil }
        let frames = Array(message.dropFirst())
        let command: WorkerCommand
        do {
            command = try WorkerMessageDecoder().decode(frames, isRegistered: !routingID.isEmpty)
        } catch {
            throw ReplayTargetError(code: .protocolError, message: "the worker sent a bad message: \(error)")
        }
        if case .heartbeat = command {
            var sink = ZMQWaitingSink(socket)
            _ = try? BrokerMessageEncoder.heartbeat(into: &sink, to: message[0], version: version)
        }
        return Message(routingID: message[0], frames: frames, command: command)
    }

    /// The polling interval while waiting for the worker (a replay is one job at a time: latency, not throughput).
    private func pause() async {
        try? await Task.sleep(for: .milliseconds(1))
    }

    static func tail(_ text: String, lines: Int = 20) -> String {
        text.split(separator: "\n", omittingEmptySubsequences: false).suffix(lines).joined(separator: "\n")
    }
}
