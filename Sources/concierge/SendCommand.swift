import ArgumentParser
import ConciergeCommandLine
import ConciergeJSON
import Foundation
import IntentClient
import IntentKit
import IntentWire
import Synchronization
import ZeroMQ

struct SendCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "send",
        abstract: "Send one intent and print every reply (progress, then final) as one JSON line each.",
        discussion: """
            The intent is JSON: {"type": "RequestRide", "parameters": {...}} (or a whole Interaction \
            {"intent": {...}, ...}), as an argument or on standard input. Exit status: 0 for a final reply, \
            1 for an error reply, 2 when no broker answered within --connect-timeout-ms (nothing was sent), none \
            answered for 10 s after the connection was lost, or no final reply came within --timeout, 3 when the \
            broker restarted while the request was in flight: the connection came back, and the new broker does \
            not know the request (error broker-restarted; whether it ran is unknown), 64 for a bad flag or intent \
            (not JSON, or no "type"), 130 when the request was cancelled. With --idempotency-key, sending the same intent again \
            with the same key never runs it twice: a completed key prints its stored final reply again, with \
            "replay": true. With --broker A,B (brokers sharing a PostgreSQL journal), the request follows the \
            active broker: a request in flight when the active broker dies is answered by the one that takes over \
            (from its journal): its final reply, or error outcome-unknown when its handle job had already been \
            given out (whether it ran is unknown; PROTOCOL.md 7.3). With --retry N, an error busy, worker-lost, \
            timeout, outcome-unknown, unavailable, broker-restarted, connection-lost or throttled is retried (up to N attempts in all, waiting 100 ms, 200 ms, ... up to 2 s between \
            them) with the same idempotency key (a random one when --idempotency-key is not given); every line \
            then has "attempt": n, and each retry is announced on standard error. Ctrl-C (SIGINT) while waiting \
            sends CANCEL for the request and prints the reply that ends it: error cancelled (exit status 130), or \
            its final reply if it finished first (0); a second Ctrl-C exits at once (130). With --converse, the \
            intent (an argument) starts a conversation (CIPC03; Docs/CONVERSATIONS.md): each turn's ending is \
            printed, what the broker asks is said on standard error (recipient: choose one of 0) ... 1) ...; size: \
            needs a value; Ready to handle SendPayment? [y/n]), and the answers are taken from --answer, else read \
            from standard input (a number for an option, y or n for a confirmation, else a value: JSON, or the text \
            as a string); only the answers are sent. Standard input closing ends the conversation (END). Exit \
            status with --converse: 0 when the conversation ends completed, 1 when it ends otherwise, 2 and 3 as \
            above; Ctrl-C ends the conversation (END) and exits 130.
            """
    )

    @Option(
        help: """
            The broker's frontend endpoint, or several separated by commas (the active broker and its standbys: the \
            request follows the active one).
            """)
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

    @Option(
        help: ArgumentHelp(
            "Attempts in all (1 to 100; default 1, no retry): retry busy, worker-lost, timeout, outcome-unknown, "
                + "unavailable, broker-restarted, connection-lost and throttled with the same idempotency key.",
            valueName: "n"))
    var retry: Int = 1

    @OptionGroup var curve: CurveClientOptions

    /// The client's heartbeat: a broker silent for three intervals is left for the next endpoint (or a new
    /// connection); with no broker answering for the client's reconnect timeout (10 s), the request fails (exit
    /// status 2).
    @OptionGroup var heartbeat: HeartbeatOption

    @Option(help: "Give up after this many seconds without a final reply.")
    var timeout: Int = 120

    @Option(
        help: ArgumentHelp(
            "How long a broker gets to answer before anything is sent (a PING), in milliseconds; without an answer, "
                + "exit status 2 naming the endpoint (default 3000, plus one heartbeat interval per further --broker "
                + "endpoint).",
            valueName: "ms"))
    var connectTimeoutMs: Int?

    @Option(
        help: ArgumentHelp(
            "Before sending, check the intent against the definition the broker serves, read from its backend "
                + "(where workers connect, e.g. tcp://127.0.0.1:5556; PROTOCOL.md 5.16): a mismatch is reported with "
                + "the code a worker would answer (unknown-parameter, invalid-type, missing-parameter, ...) and "
                + "nothing is sent (exit 1). With CURVE the same key must also be on the broker's worker list.",
            valueName: "backend"))
    var check: String?

    @Option(
        help: ArgumentHelp(
            "Ask for this version of the intent's definition (PROTOCOL.md 5.18): every job runs on a worker serving "
                + "it or a compatible later one; refused unknown-intent when no worker serves it. Default: the oldest "
                + "version served. --check then checks against that version.",
            valueName: "N"))
    var definitionVersion: Int?

    @Flag(
        help: """
            Start a conversation with the intent and answer what the broker asks, turn by turn, from --answer and \
            standard input (the intent must then be an argument).
            """)
    var converse = false

    @Option(
        help: ArgumentHelp(
            "With --converse, the conversation id (1 to 255 printable ASCII bytes; default: generated).",
            valueName: "id"))
    var conversationID: String?

    @Option(
        name: .customLong("answer"),
        help: ArgumentHelp(
            "With --converse, an answer given in advance, used once for the first ask it fits: P=option:N, "
                + "P=confirm:yes|no, P=VALUE (JSON, else text; P=value:TEXT for text starting option:), "
                + "confirm:yes|no (the whole intent). Repeatable.",
            valueName: "answer"))
    var answers: [String] = []

    @Flag(help: "With --converse, ask the broker to record a transcript of the conversation (the record flag).")
    var record = false

    @Flag(
        help: """
            With --converse, stop before handle and ask "Ready to handle ...? [y/n]" (the confirm flag: the broker \
            waits for a yes once confirm answers ready).
            """)
    var confirmBeforeHandle = false

    @Argument(help: "The intent as JSON (default: read standard input).")
    var json: String?

    /// The exit status for a request cancelled by Ctrl-C (128 + SIGINT, as shells report it).
    static let cancelledStatus: Int32 = 130

    /// Checks every flag and the intent here rather than in `run()`, so that a mistake is reported with `send`'s
    /// usage (exit status 64), not the root command's. Reads the intent from standard input when it is not an
    /// argument (into ``json``, for `run()`).
    mutating func validate() throws {
        _ = try BrokerEndpointList.parse(broker)
        guard RequestPhase(phase) != nil else {
            throw ValidationError("--phase must be resolve, confirm, handle or lifecycle, not \"\(phase)\"")
        }
        if let idempotencyKey, idempotencyKey.isEmpty || idempotencyKey.utf8.count > CIP.maxIdempotencyKeyLength {
            throw ValidationError("--idempotency-key takes 1 to 255 bytes")
        }
        guard (1...100).contains(retry) else { throw ValidationError("--retry takes 1 to 100 attempts") }
        guard timeout >= 1 else { throw ValidationError("--timeout takes 1 second or more") }
        if let check {
            do {
                try EndpointSyntax.check(check, connecting: true)
            } catch {
                throw ValidationError("--check: \(error.message)")
            }
        }
        if let connectTimeoutMs, connectTimeoutMs < 1 {
            throw ValidationError("--connect-timeout-ms takes 1 or more")
        }
        if let definitionVersion, !(1...Int(Int32.max)).contains(definitionVersion) {
            throw ValidationError("--definition-version takes a whole number from 1")
        }
        if converse {
            try validateConversation()
        } else if !answers.isEmpty || conversationID != nil || record || confirmBeforeHandle {
            throw ValidationError("--answer, --conversation-id, --record and --confirm-before-handle need --converse")
        }
        if json == nil { json = String(decoding: FileHandle.standardInput.readDataToEndOfFile(), as: UTF8.self) }
        _ = try Self.interaction(json ?? "")
    }

    /// The flags of `--converse`: standard input carries the answers, so the intent is an argument; a conversation
    /// runs the lifecycle, and its turns are keyed by their numbers, not by an idempotency key.
    private func validateConversation() throws {
        guard json != nil else {
            throw ValidationError("--converse takes the intent as an argument (standard input carries the answers)")
        }
        guard phase == "lifecycle" else { throw ValidationError("--converse runs the lifecycle: leave out --phase") }
        guard idempotencyKey == nil, id == nil else {
            throw ValidationError(
                "--converse numbers its turns (a retried turn never runs twice): leave out --idempotency-key and --id")
        }
        if let conversationID, !ConciergeClient.isValidConversationID(conversationID) {
            throw ValidationError("--conversation-id takes 1 to 255 bytes of printable ASCII (no spaces)")
        }
        for answer in answers { _ = try ScriptedAnswer.parse(answer) }
    }

    /// The Interaction to send and its intent type: `text` is an intent (`{"type": ..., "parameters": ...}`) or a
    /// whole Interaction (`{"intent": {...}, ...}`). Throws a `ValidationError` saying what is wrong.
    static func interaction(_ text: String) throws -> (interaction: JSONValue, intentType: String) {
        let value: JSONValue
        do {
            value = try JSONValue.parse(text)
        } catch {
            throw ValidationError("the intent is not valid JSON: \(error)")
        }
        let interaction: JSONValue = value["intent"] != nil ? value : ["intent": value]
        guard interaction["intent"]?.objectValue != nil else {
            throw ValidationError(
                "the intent must be a JSON object: {\"type\": \"RequestRide\", \"parameters\": {...}}")
        }
        guard let intentType = interaction["intent"]?["type"]?.stringValue, !intentType.isEmpty else {
            throw ValidationError(
                "the intent has no \"type\": give one, e.g. {\"type\": \"Echo\", \"parameters\": {\"text\": \"hi\"}}")
        }
        return (interaction, intentType)
    }

    /// `--check`: the intent against the definition that will serve it (PROTOCOL.md 5.18): version `version` when
    /// asked for, else the oldest served. Exit 1, nothing sent, when it does not match or that version is not
    /// served; a type whose workers announce no definition (older than CIPW04) is only warned about.
    static func checkAgainstServedDefinition(
        _ intent: JSONValue, intentType: String, phase: RequestPhase, backend: String, curve: CurveClientKeys?,
        version: Int? = nil
    ) throws {
        func fail(_ message: String, status: Int32 = 1) throws -> Never {
            FileHandle.standardError.write(Data("concierge send: \(message); nothing was sent\n".utf8))
            throw ExitCode(status)
        }
        let stats: BrokerStats
        do {
            stats = try BrokerStatsQuery.ask(backend, curve: curve)
        } catch {
            try fail("--check: \(error)", status: 2)
        }
        guard let type = stats.intentTypes.first(where: { $0.name == intentType }), type.workers > 0 else {
            try fail("--check: no worker of the broker at \(backend) serves \(intentType)")
        }
        guard !type.definitions.isEmpty else {
            FileHandle.standardError.write(
                Data(
                    "concierge send: --check: the workers of \(intentType) announce no definition (CIPW03 or older)\n"
                        .utf8))
            return
        }
        let versions = type.definitions.map(\.version).sorted()
        let chosen =
            version.map { version in type.definitions.first { $0.version == version } }
            ?? type.definitions.min { $0.version < $1.version }
        guard let served = chosen else {
            try fail(
                "--check: no worker of the broker at \(backend) serves version \(version ?? 0) of \(intentType) "
                    + "(served: \(versions.map(String.init).joined(separator: ", ")))")
        }
        do {
            try IntentDefinition(jsonValue: served.definition).check(intent: intent, phase: phase)
        } catch let error as IntentError {
            let hint =
                version == nil && versions.count > 1
                ? "; requests that name no version run under the oldest: name a later one with --definition-version"
                : ""
            try fail(
                "the intent does not match the definition that will serve it: \(error.code): \(error.message) "
                    + "(definition version \(served.version), \(served.digest.dropFirst("sha256:".count).prefix(12))"
                    + ")\(hint)")
        } catch {
            try fail("the served definition (version \(served.version)) cannot be read: \(error)")
        }
    }

    func run() async throws {
        let phase = RequestPhase(self.phase) ?? .lifecycle
        let (interaction, intentType) = try Self.interaction(json ?? "")
        let endpoints = try BrokerEndpointList.parse(broker)
        let keys: CurveClientKeys?
        do {
            keys = try curve.keys()
        } catch {
            FileHandle.standardError.write(Data("concierge send: \(error)\n".utf8))
            throw ExitCode(2)
        }
        if let check {
            try Self.checkAgainstServedDefinition(
                interaction["intent"] ?? .null, intentType: intentType, phase: phase, backend: check, curve: keys,
                version: definitionVersion)
        }
        let client = try ConciergeClient(
            configuration: .init(
                brokerEndpoints: endpoints,
                heartbeatInterval: .milliseconds(heartbeat.heartbeatMs), curve: keys
            )
        )
        defer { client.close() }

        // A one-shot command: a broker that does not answer a PING soon is reported at once, not after the
        // client's reconnect timeout (nothing was sent, so nothing ran).
        let connectTimeout = Duration.milliseconds(
            connectTimeoutMs ?? 3000 + heartbeat.heartbeatMs * (endpoints.count - 1))
        guard await Self.answersPing(client, within: connectTimeout) else {
            FileHandle.standardError.write(
                Data(
                    ("concierge send: no broker answered at \(endpoints.joined(separator: ",")) within "
                        + "\(connectTimeout.wholeMilliseconds) ms (is `concierge broker` or `concierge up` running "
                        + "there? --connect-timeout-ms waits longer); nothing was sent\n").utf8))
            throw ExitCode(2)
        }

        if converse {
            throw ExitCode(
                await converse(
                    client, interaction: interaction, intentType: intentType,
                    deadline: deadlineMs.map { .milliseconds($0) }))
        }

        let printer = SendPrinter(showAttempt: retry > 1)
        let (outcomes, outcome) = AsyncStream<SendOutcome>.makeStream()
        let policy = retry > 1 ? RetryPolicy(maxAttempts: retry) : nil
        let body = interaction.serialized()
        let deadline = deadlineMs.map { Duration.milliseconds($0) }
        let (id, idempotencyKey) = (self.id, self.idempotencyKey)
        let requestTask = Task {
            do {
                let reply = try await client.request(
                    intentType: ConciergeClient.wireIntentType(intentType, definitionVersion: definitionVersion),
                    phase: phase, body: body, deadline: deadline, requestID: id,
                    idempotencyKey: idempotencyKey, retry: policy, events: { printer.handle($0) })
                outcome.yield(.ended(.success(reply)))
            } catch {
                outcome.yield(.ended(.failure(error)))
            }
        }
        let timeout = self.timeout
        let timer = Task {
            try? await Task.sleep(for: .seconds(timeout))
            if !Task.isCancelled { outcome.yield(.timedOut) }
        }
        defer { timer.cancel() }

        // Ctrl-C: CANCEL the attempt in flight and wait for its ending; a second Ctrl-C exits at once.
        signal(SIGINT, SIG_IGN)
        let interrupt = DispatchSource.makeSignalSource(signal: SIGINT)
        interrupt.setEventHandler {
            switch printer.interrupt() {
            case .exitNow:
                FileHandle.standardError.write(Data("concierge send: interrupted\n".utf8))
                Foundation.exit(Self.cancelledStatus)
            case .cancel(let inFlight):
                Task {
                    do {
                        outcome.yield(.cancelAnswered(.success(try await client.cancel(requestID: inFlight))))
                    } catch {
                        outcome.yield(.cancelAnswered(.failure(error)))
                    }
                }
            case .stop:
                break
            }
            // Stops the retries (and a backoff wait); the attempt's own CANCEL answer ends the wait above.
            requestTask.cancel()
        }
        interrupt.resume()
        defer { interrupt.cancel() }

        for await event in outcomes {
            switch event {
            case .timedOut:
                FileHandle.standardError.write(Data("concierge send: no final reply within \(timeout) s\n".utf8))
                throw ExitCode(2)
            case .ended(.success(let reply)), .cancelAnswered(.success(let reply)):
                printer.printEnding(reply)
                throw Self.exitCode(for: reply)
            case .ended(.failure(let error)):
                if error is CancellationError && printer.interrupted {
                    // Ctrl-C: the answer to the CANCEL follows, if an attempt was in flight.
                    if printer.cancelSent { continue }
                    FileHandle.standardError.write(Data("concierge send: interrupted\n".utf8))
                    throw ExitCode(Self.cancelledStatus)
                }
                try Self.fail(error)
            case .cancelAnswered(.failure(let error)):
                FileHandle.standardError.write(Data("concierge send: cancel: \(error)\n".utf8))
                throw ExitCode(Self.cancelledStatus)
            }
        }
    }

    /// `--converse`: the conversation, turn by turn (``ConverseSession``); Ctrl-C ends it (END) and exits 130.
    private func converse(
        _ client: ConciergeClient, interaction: JSONValue, intentType: String, deadline: Duration?
    ) async -> Int32 {
        let conversationID = self.conversationID ?? ConciergeClient.makeConversationID()
        var flags: ConversationFlags = []
        if record { flags.insert(.record) }
        if confirmBeforeHandle { flags.insert(.confirmBeforeHandle) }
        signal(SIGINT, SIG_IGN)
        let interrupt = DispatchSource.makeSignalSource(signal: SIGINT)
        interrupt.setEventHandler {
            Task {
                let ended = try? await client.endConversation(conversationID)
                FileHandle.standardError.write(
                    Data(
                        "\nconcierge send: interrupted: conversation \(conversationID) \(ended == nil ? "left to expire" : "ended")\n"
                            .utf8))
                Foundation.exit(Self.cancelledStatus)
            }
        }
        interrupt.resume()
        defer { interrupt.cancel() }
        var session = ConverseSession(
            client: client, conversationID: conversationID,
            scripted: answers.compactMap { try? ScriptedAnswer.parse($0) },
            deadline: deadline, retry: RetryPolicy(maxAttempts: retry > 1 ? retry : 3))
        var interaction = interaction
        if let definitionVersion, case .object(var intent)? = interaction["intent"],
            case .object(var object) = interaction
        {
            // Turn 1 names the version as `Type@N` (PROTOCOL.md 5.18); the broker gives handlers the type itself.
            intent["type"] = .string(ConciergeClient.wireIntentType(intentType, definitionVersion: definitionVersion))
            object["intent"] = .object(intent)
            interaction = .object(object)
        }
        return await session.run(intentType: intentType, body: interaction.serialized(), flags: flags)
    }

    /// Whether the broker answers a PING within `timeout`. (Not a task group: it would wait for the PING, which
    /// ends only when the client is closed.)
    static func answersPing(_ client: ConciergeClient, within timeout: Duration) async -> Bool {
        let (answers, answer) = AsyncStream<Bool>.makeStream()
        let ping = Task { answer.yield((try? await client.ping()) != nil) }
        let timer = Task {
            try? await Task.sleep(for: timeout)
            answer.yield(false)
        }
        var iterator = answers.makeAsyncIterator()
        let answered = await iterator.next() ?? false
        timer.cancel()
        if !answered { ping.cancel() }
        return answered
    }

    /// The exit status for a request's ending: 0 final, 130 `cancelled`, 1 another error.
    static func exitCode(for reply: Reply) -> ExitCode {
        if reply.status == .final { return .success }
        return ExitCode(reply.errorCode == WireErrorCode.cancelled.rawValue ? cancelledStatus : 1)
    }

    static func fail(_ error: any Error) throws -> Never {
        if let error = error as? ClientError, error.code == .brokerRestarted {
            FileHandle.standardError.write(
                Data("concierge send: \(error) (send it again only if running it twice is safe)\n".utf8)
            )
            throw ExitCode(3)
        }
        FileHandle.standardError.write(Data("concierge send: \(error)\n".utf8))
        throw ExitCode(2)
    }
}

/// What ends `concierge send`'s wait.
private enum SendOutcome: Sendable {
    /// The request (with its retries) ended.
    case ended(Result<Reply, any Error>)
    /// The answer to the CANCEL sent on Ctrl-C.
    case cancelAnswered(Result<Reply, any Error>)
    case timedOut
}

/// Prints the replies of `concierge send` (one JSON line each), and remembers the attempt in flight for Ctrl-C.
/// The ending is printed once, whether it comes with the request or as the answer to a CANCEL.
private final class SendPrinter: Sendable {
    private struct State {
        /// The request id of the attempt in flight.
        var inFlight: String?
        var interrupts = 0
        /// Ctrl-C sent CANCEL for the attempt in flight.
        var cancelSent = false
        var endingPrinted = false
        /// The last final or error reply printed by ``handle(_:)``.
        var lastEnding: Reply?
    }

    /// What to do on Ctrl-C.
    enum Interrupt {
        /// CANCEL this request id (the attempt in flight).
        case cancel(String)
        /// No attempt in flight (between attempts): stop.
        case stop
        /// The second Ctrl-C.
        case exitNow
    }

    private let state = Mutex(State())
    private let showAttempt: Bool

    init(showAttempt: Bool) { self.showAttempt = showAttempt }

    var interrupted: Bool { state.withLock { $0.interrupts > 0 } }

    var cancelSent: Bool { state.withLock { $0.cancelSent } }

    /// Handles one event of the request: prints replies (until Ctrl-C; the ending that counts is printed by
    /// ``printEnding(_:)``), announces retries on standard error.
    func handle(_ event: RequestEvent) {
        switch event {
        case .sent(_, let requestID, _):
            state.withLock { $0.inFlight = requestID }
        case .reply(let reply):
            state.withLock { state in
                if reply.isFinal { state.inFlight = nil }
                // After Ctrl-C only the ending of the cancelled attempt is printed (by printEnding).
                guard state.interrupts == 0, !state.endingPrinted else { return }
                if reply.isFinal { state.lastEnding = reply }
                write(reply)
            }
        case .retrying(let attempt, let code, let backoff):
            let milliseconds =
                backoff.components.seconds * 1000 + backoff.components.attoseconds / 1_000_000_000_000_000
            FileHandle.standardError.write(
                Data("concierge send: attempt \(attempt) ended with \(code); retrying in \(milliseconds) ms\n".utf8))
        }
    }

    /// Ctrl-C: what to do.
    func interrupt() -> Interrupt {
        state.withLock { state in
            state.interrupts += 1
            guard state.interrupts == 1 else { return .exitNow }
            guard let inFlight = state.inFlight else { return .stop }
            state.cancelSent = true
            return .cancel(inFlight)
        }
    }

    /// Prints the ending of the request, unless it was printed already.
    func printEnding(_ reply: Reply) {
        state.withLock { state in
            guard !state.endingPrinted else { return }
            state.endingPrinted = true
            // A reply already printed by `handle` (the ending came before Ctrl-C) is not printed again.
            if state.lastEnding == reply { return }
            write(reply)
        }
    }

    private func write(_ reply: Reply) {
        var fields: JSONObject = [
            "request_id": .string(reply.requestID), "status": .string(reply.status.rawValue),
            "phase": .string(reply.phase),
            "body": reply.json ?? .string(String(decoding: reply.body, as: UTF8.self)),
        ]
        if reply.isReplay { fields["replay"] = true }
        if showAttempt { fields["attempt"] = .int(Int64(reply.attempts)) }
        let line = JSONValue.object(fields)
        FileHandle.standardOutput.write(Data((line.serializedString() + "\n").utf8))
    }
}
