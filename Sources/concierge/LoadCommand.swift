import ArgumentParser
import ConciergeCommandLine
import ConciergeJSON
import Foundation
import IntentLoad
import IntentWire

/// `concierge load`: the bundled load client (closed or open loop), with reports and a release gate.
struct LoadCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "load",
        abstract: "Drive a broker with load and report throughput, latency percentiles, outcomes and deadline misses.",
        discussion: """
            Closed loop: --concurrency N requests in flight. Open loop: --rate R requests per second, latency measured \
            from each request's intended send time (no coordinated omission). The workload is the Echo intent \
            (--payload, --delay-ms, --cpu-ms), another intent (--intent T --parameters JSON), or a weighted mix \
            (--mix FILE: [{"weight": 3, "phase": "lifecycle", "intent": {...}}, ...]). A progress line is printed \
            every second on standard error; the report at the end on standard output (--json: the JSON summary \
            instead). Requests that a restarted broker no longer knows (asked with STATUS when a connection comes \
            back) count as the outcome error.broker-restarted, not as unanswered. Final replies whose code is a \
            handler's failure (failure, failureRequiringAppLaunch, ...) are counted as failures, not as \
            throughput. A run whose first 20 answers are all unknown-intent (no worker serves the intent) stops \
            there. Exit status: 0, 1 when a --max-*/--min-* limit is broken, 2 when the run could not be made \
            (the broker did not answer, or no worker serves the intent).
            """
    )

    @Option(
        help: """
            The broker's frontend endpoint, or several separated by commas (the run uses the first whose broker \
            answers PING: the active one).
            """)
    var broker: String = Defaults.load.endpoint

    @OptionGroup var curve: CurveClientOptions

    @Option(help: "Closed loop: requests in flight (default \(Self.defaultConcurrency) unless --rate is given).")
    var concurrency: Int?

    @Option(help: "Open loop: arrival rate in requests per second.")
    var rate: Double?

    @Option(
        help:
            "Connections to spread the requests over (default \(Defaults.load.connections); never more than --concurrency)."
    )
    var connections: Int?

    @Option(
        help: "How long to offer load after the warm-up: 10s, 500ms, 2m (default \(Self.show(Defaults.load.duration)))."
    )
    var duration: String?

    @Option(help: "How many measured requests to send (the run ends at the first of --duration and --requests).")
    var requests: Int?

    @Option(help: "Warm-up before measuring (sent, not counted; default \(Self.show(Defaults.load.warmup))).")
    var warmup: String?

    @Option(help: "First-reply deadline sent with every request, in milliseconds.")
    var deadlineMs: Int = Defaults.load.deadlineMilliseconds

    @Option(
        help:
            "After the last request, how long to wait for outstanding replies (default \(Self.show(Defaults.load.drainTimeout)))."
    )
    var drainTimeout: String?

    @Option(
        help:
            "How long to wait for the broker to answer a PING on every connection before giving up (default \(Self.show(Defaults.load.connectTimeout)))."
    )
    var connectTimeout: String?

    @Option(help: "Open loop: most requests in flight; due requests beyond it wait in the client.")
    var maxInFlight: Int = Defaults.load.maxInFlight

    @Option(help: "Intent type to send (Echo by default; other intents take --parameters).")
    var intent: String = "Echo"

    @Option(help: "Parameters of --intent as a JSON object (for intents other than Echo).")
    var parameters: String?

    @Option(help: "A JSON file with a weighted mix of intents (overrides --intent).")
    var mix: String?

    @Option(help: "resolve, confirm, handle or lifecycle (default: handle for Echo, lifecycle otherwise).")
    var phase: String?

    @Option(help: "Echo: bytes of text in each request.")
    var payload: Int = 250

    @Option(help: "Echo: milliseconds the handler waits.")
    var delayMs: Int = 0

    @Option(help: "Echo: milliseconds of CPU the handler burns.")
    var cpuMs: Int = 0

    @Flag(
        help:
            "Give every request a fresh idempotency key (CIPC02 REQUEST with a key), to measure what keys cost the broker."
    )
    var idempotency = false

    @Option(
        help: ArgumentHelp(
            "Client-side adaptive throttling with multiplier K (e.g. 1.1; off by default).",
            discussion:
                "Per intent type, once the broker refuses requests with busy, the client itself refuses a share of new "
                + "ones, unsent, so that it sends about K times what the broker accepts (outcome 'throttled'). "
                + "Without it, every request is sent and the run measures the broker's own shedding."
        )
    )
    var clientThrottle: Double?

    @Flag(
        help: ArgumentHelp(
            "Open loop: send every request, ignoring the broker's pushback.",
            discussion:
                "By default, as the client library does, a connection whose request the broker refuses with busy and "
                + "a pushback rate (PROTOCOL.md 6.3) sends at most that rate of the intent type while the hint holds, "
                + "and refuses the rest itself, unsent (outcome 'throttled'). With this flag the run measures the "
                + "broker's own shedding."
        )
    )
    var ignorePushback = false

    @Flag(help: "Print the JSON summary on standard output instead of the table.")
    var json = false

    @Option(
        help:
            "Write the final-reply latency distribution (HdrHistogram .hgrm, ms) here, and the first-reply one to <name>.first.hgrm."
    )
    var hgrm: String?

    @Option(
        help:
            "Write an HTML report here: the run (date, host, endpoint, version, command line), the gate, tables, charts."
    )
    var html: String?

    @Flag(help: "No progress line.")
    var quiet = false

    @Option(help: "Gate: highest final-reply p99 (e.g. 5ms).")
    var maxP99: String?

    @Option(help: "Gate: highest first-reply p99.")
    var maxFirstP99: String?

    @Option(help: "Gate: most errors (error replies plus unanswered requests).")
    var maxErrors: Int?

    @Option(help: "Gate: most deadline misses.")
    var maxDeadlineMisses: Int?

    @Option(help: "Gate: lowest throughput in final replies per second.")
    var minThroughput: Double?

    func validate() throws {
        _ = try BrokerEndpointList.parse(broker)
    }

    func run() async throws {
        var configuration = try makeConfiguration()
        let workload = try makeWorkload()
        let gate = try makeGate()
        do {
            configuration.curve = try curve.keys()
        } catch {
            FileHandle.standardError.write(Data("concierge load: \(error)\n".utf8))
            throw ExitCode(2)
        }
        let runner: LoadRunner
        do {
            runner = try LoadRunner(configuration: configuration, workload: workload)
        } catch {
            throw ValidationError(error.message)
        }
        signal(SIGINT, SIG_IGN)
        let interrupt = DispatchSource.makeSignalSource(signal: SIGINT)
        interrupt.setEventHandler { runner.stop() }
        interrupt.resume()
        defer { interrupt.cancel() }

        let quiet = self.quiet
        let started = ConciergeVersion.utcNow()
        let summary: LoadSummary
        do {
            summary = try await runner.run { progress in
                if !quiet { FileHandle.standardError.write(Data((progress.line + "\n").utf8)) }
            }
        } catch {
            FileHandle.standardError.write(Data("concierge load: \(error)\n".utf8))
            throw ExitCode(2)
        }

        if json {
            print(summary.json.serializedString())
        } else {
            print(summary.table)
        }
        if let hgrm {
            try summary.finalReplyDistribution.write(toFile: hgrm, atomically: true, encoding: .utf8)
            let first = (hgrm.hasSuffix(".hgrm") ? String(hgrm.dropLast(5)) : hgrm) + ".first.hgrm"
            try summary.firstReplyDistribution.write(toFile: first, atomically: true, encoding: .utf8)
        }
        if let html {
            let context = LoadReportContext(
                date: started, host: ProcessInfo.processInfo.hostName, endpoint: broker,
                version: ConciergeVersion.current, commandLine: ConciergeVersion.shellQuoted(CommandLine.arguments),
                gate: gate.checks(of: summary))
            try summary.html(context: context).write(toFile: html, atomically: true, encoding: .utf8)
        }
        if !gate.isEmpty {
            let broken = gate.violations(of: summary)
            for violation in broken {
                FileHandle.standardError.write(Data("concierge load: gate: \(violation)\n".utf8))
            }
            if !broken.isEmpty { throw ExitCode(1) }
        }
    }

    /// The closed loop's concurrency when neither --concurrency nor --rate is given.
    static var defaultConcurrency: Int {
        if case .closed(let concurrency) = Defaults.load.mode { return concurrency }
        return 1
    }

    /// A default duration as the options take it: `1s`, `500ms`.
    static func show(_ duration: Duration?) -> String {
        guard let duration else { return "none" }
        let milliseconds = duration.wholeMilliseconds
        return milliseconds % 1000 == 0 ? "\(milliseconds / 1000)s" : "\(milliseconds)ms"
    }

    func makeConfiguration() throws -> LoadConfiguration {
        func parse(_ text: String, _ flag: String) throws -> Duration {
            guard let value = LoadDuration.parse(text) else {
                throw ValidationError("\(flag): \"\(text)\" is not a duration (e.g. 10s, 500ms, 2m)")
            }
            return value
        }
        if rate != nil && concurrency != nil { throw ValidationError("give --concurrency or --rate, not both") }
        let defaults = Defaults.load
        let mode: LoadConfiguration.Mode =
            rate.map { .open(rate: $0) } ?? concurrency.map { .closed(concurrency: $0) } ?? defaults.mode
        var connections = self.connections ?? defaults.connections
        if case .closed(let concurrency) = mode { connections = min(connections, concurrency) }
        var runFor: Duration? = try self.duration.map { try parse($0, "--duration") }
        if runFor == nil && requests == nil { runFor = defaults.duration }
        let endpoints = try BrokerEndpointList.parse(broker)
        var configuration = LoadConfiguration(
            endpoint: endpoints[0], mode: mode, connections: connections, duration: runFor, requestCount: requests,
            warmup: try warmup.map { try parse($0, "--warmup") } ?? defaults.warmup, deadlineMilliseconds: deadlineMs,
            drainTimeout: try drainTimeout.map { try parse($0, "--drain-timeout") } ?? defaults.drainTimeout,
            maxInFlight: maxInFlight,
            connectTimeout: try connectTimeout.map { try parse($0, "--connect-timeout") } ?? defaults.connectTimeout,
            idempotencyKeys: idempotency
        )
        if let clientThrottle {
            do {
                configuration.throttle = try AdaptiveThrottle.Configuration(multiplier: clientThrottle)
            } catch {
                throw ValidationError("--client-throttle: \(error.message)")
            }
        }
        configuration.heedsPushback = !ignorePushback
        configuration.endpoints = endpoints
        return configuration
    }

    func makeWorkload() throws -> LoadWorkload {
        var requestedPhase: RequestPhase?
        if let phase {
            guard let parsed = RequestPhase(phase) else {
                throw ValidationError("--phase must be resolve, confirm, handle or lifecycle")
            }
            requestedPhase = parsed
        }
        do {
            if let mix {
                guard let data = FileManager.default.contents(atPath: mix) else {
                    throw ValidationError("--mix: cannot read \(mix)")
                }
                return try LoadWorkload.mix(json: Array(data), overridePhase: requestedPhase)
            }
            if intent == "Echo" && parameters == nil {
                guard payload >= 0, (0...600_000).contains(delayMs), (0...600_000).contains(cpuMs) else {
                    throw ValidationError("--payload must be >= 0; --delay-ms and --cpu-ms 0 to 600000")
                }
                return LoadWorkload.echo(
                    payloadBytes: payload, delayMilliseconds: delayMs, cpuMilliseconds: cpuMs,
                    phase: requestedPhase ?? .handle
                )
            }
            let parameters = try JSONValue.parse(self.parameters ?? "{}")
            guard parameters.objectValue != nil else { throw ValidationError("--parameters must be a JSON object") }
            let item: JSONValue = [
                "phase": .string((requestedPhase ?? .lifecycle).description),
                "intent": ["type": .string(intent), "parameters": parameters],
            ]
            return try LoadWorkload.mix(json: JSONValue.array([item]).serialized())
        } catch let error as LoadError {
            throw ValidationError(error.message)
        } catch let error as JSONError {
            throw ValidationError("--parameters is not valid JSON: \(error)")
        }
    }

    func makeGate() throws -> LoadGate {
        func limit(_ text: String?, _ flag: String) throws -> Duration? {
            guard let text else { return nil }
            guard let value = LoadDuration.parse(text) else {
                throw ValidationError("\(flag): \"\(text)\" is not a duration (e.g. 5ms)")
            }
            return value
        }
        return LoadGate(
            maxP99: try limit(maxP99, "--max-p99"), maxFirstReplyP99: try limit(maxFirstP99, "--max-first-p99"),
            maxErrors: maxErrors, maxDeadlineMisses: maxDeadlineMisses, minThroughput: minThroughput
        )
    }
}
