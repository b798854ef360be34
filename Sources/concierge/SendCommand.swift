import ArgumentParser
import ConciergeCommandLine
import ConciergeJSON
import Foundation
import IntentClient
import IntentWire
import ZeroMQ

struct SendCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "send",
        abstract: "Send one intent and print every reply (progress, then final) as one JSON line each.",
        discussion: """
            The intent is JSON: {"type": "RequestRide", "parameters": {...}} (or a whole Interaction \
            {"intent": {...}, ...}), as an argument or on standard input. Exit status: 0 for a final reply, \
            1 for an error reply, 2 when the broker could not be reached (or stopped answering, or no final reply \
            came within --timeout), 3 when the broker restarted while the request was in flight: the connection \
            came back, and the new broker does not know the request (error broker-restarted; whether it ran is \
            unknown). With --idempotency-key, sending the same intent again with the same key never runs it \
            twice: a completed key prints its stored final reply again, with "replay": true.
            """
    )

    @Option(help: "The broker's frontend endpoint.")
    var broker: String = Defaults.client.brokerEndpoint

    @Option(help: "resolve, confirm, handle or lifecycle.")
    var phase: String = "lifecycle"

    @Option(help: "First-reply deadline in milliseconds (default: the broker's).")
    var deadlineMs: Int?

    @Option(help: "Request id (default: generated).")
    var id: String?

    @Option(
        help: ArgumentHelp(
            "Idempotency key (1 to 255 bytes, e.g. a UUID): retries with the same key and intent never run it twice.",
            valueName: "key"))
    var idempotencyKey: String?

    @OptionGroup var curve: CurveClientOptions

    /// The client's heartbeat: with no broker answering, the request fails (exit status 2) after three intervals.
    @OptionGroup var heartbeat: HeartbeatOption

    @Option(help: "Give up after this many seconds without a final reply.")
    var timeout: Int = 120

    @Argument(help: "The intent as JSON (default: read standard input).")
    var json: String?

    func run() async throws {
        guard let phase = RequestPhase(phase) else {
            throw ValidationError("phase must be resolve, confirm, handle or lifecycle")
        }
        if let idempotencyKey, idempotencyKey.isEmpty || idempotencyKey.utf8.count > CIP.maxIdempotencyKeyLength {
            throw ValidationError("--idempotency-key takes 1 to 255 bytes")
        }
        let text = json ?? String(decoding: FileHandle.standardInput.readDataToEndOfFile(), as: UTF8.self)
        let value: JSONValue
        do {
            value = try JSONValue.parse(text)
        } catch {
            throw ValidationError("the intent is not valid JSON: \(error)")
        }
        let interaction: JSONValue = value["intent"] != nil ? value : ["intent": value]
        let intentType = interaction["intent"]?["type"]?.stringValue ?? ""
        let keys: CurveClientKeys?
        do {
            keys = try curve.keys()
        } catch {
            FileHandle.standardError.write(Data("concierge send: \(error)\n".utf8))
            throw ExitCode(2)
        }
        let client = try ConciergeClient(
            configuration: .init(
                brokerEndpoint: broker, heartbeatInterval: .milliseconds(heartbeat.heartbeatMs), curve: keys
            )
        )
        defer { client.close() }
        let stream = client.send(
            intentType: intentType, phase: phase, body: interaction.serialized(),
            deadline: deadlineMs.map { .milliseconds($0) }, requestID: id, idempotencyKey: idempotencyKey
        )
        let exitCode: Int32
        do {
            exitCode = try await withThrowingTaskGroup(of: Int32.self) { group in
                group.addTask {
                    var code: Int32 = 2
                    for try await reply in stream {
                        var fields: [String: JSONValue] = [
                            "request_id": .string(reply.requestID), "status": .string(reply.status.rawValue),
                            "phase": .string(reply.phase),
                            "body": reply.json ?? .string(String(decoding: reply.body, as: UTF8.self)),
                        ]
                        if reply.isReplay { fields["replay"] = true }
                        let line = JSONValue.object(fields)
                        FileHandle.standardOutput.write(Data((line.serializedString() + "\n").utf8))
                        if reply.isFinal { code = reply.status == .final ? 0 : 1 }
                    }
                    return code
                }
                group.addTask {
                    try await Task.sleep(for: .seconds(timeout))
                    return -1
                }
                let first = try await group.next() ?? 2
                group.cancelAll()
                return first
            }
        } catch let error as ClientError where error.code == .brokerRestarted {
            FileHandle.standardError.write(
                Data("concierge send: \(error) (send it again only if running it twice is safe)\n".utf8)
            )
            throw ExitCode(3)
        } catch let error as ClientError {
            FileHandle.standardError.write(Data("concierge send: \(error)\n".utf8))
            throw ExitCode(2)
        }
        if exitCode == -1 {
            FileHandle.standardError.write(Data("concierge send: no final reply within \(timeout) s\n".utf8))
            throw ExitCode(2)
        }
        if exitCode != 0 { throw ExitCode(exitCode) }
    }
}
