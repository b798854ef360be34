import ArgumentParser
import ConciergeCommandLine
import ConciergeExamples
import ConciergeJSON
import Foundation
import IntentTesting
import IntentTranscript
import IntentTranscriptReplay
import IntentWire

/// `concierge replay`: recorded conversations (Docs/TRANSCRIPTS.md) replayed as regression tests against the example
/// handlers in process, a worker executable or a live broker; a readable diff for each that differs.
struct ReplayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replay",
        abstract: "Replay recorded conversations (transcripts) and show what answers differently.",
        discussion: """
            By default each recorded phase runs again in this process, on the example handlers, on the input it \
            recorded; --worker runs it as a JOB on a worker executable started for the replay (no broker); --broker \
            sends each recorded turn again to a live broker as a new conversation. Outcomes, outputs and replies are \
            compared field by field, leaving out what varies from run to run (times, durations, request ids, worker \
            names, attempts, conversation.expiresInMs) and the key paths given with --ignore. Prints `ok` or the \
            diff for each file. Exit status: 0 when every transcript matched, 1 when one differed, 2 when one could \
            not be read or replayed.
            """
    )

    @Argument(help: "Transcript files (JSON Lines, one conversation each).")
    var files: [String]

    @Option(help: "A worker executable to replay against; started with --broker <a private ipc:// endpoint>.")
    var worker: String?

    @Option(
        name: .customLong("worker-arg"), parsing: .unconditionalSingleValue,
        help: "An argument for the worker executable, after --broker (repeat for each).")
    var workerArguments: [String] = []

    @Option(help: "A live broker's frontend endpoint: each transcript's turns go to it as a new conversation.")
    var broker: String?

    @Option(help: "A key path to leave out of the comparison, dotted (e.g. handle.data.messageId); repeatable.")
    var ignore: [String] = []

    @Flag(help: "Also report what the transcripts exercised: intent types, parameters, resolution kinds, codes.")
    var coverage = false

    @Flag(help: "Print one JSON object (reports, and coverage with --coverage) instead of text.")
    var json = false

    @OptionGroup var curve: CurveClientOptions

    func validate() throws {
        guard !files.isEmpty else { throw ValidationError("name at least one transcript file") }
        guard worker == nil || broker == nil else { throw ValidationError("--worker and --broker: choose one") }
        guard workerArguments.isEmpty || worker != nil else { throw ValidationError("--worker-arg needs --worker") }
        if let broker {
            do { try EndpointSyntax.check(broker, connecting: true) } catch {
                throw ValidationError("--broker: \(error.message)")
            }
        }
        for path in ignore
        where path.isEmpty
            || path.split(separator: ".", omittingEmptySubsequences: false)
                .contains(where: \.isEmpty)
        {
            throw ValidationError("--ignore takes a dotted key path such as handle.data.messageId, not `\(path)`")
        }
    }

    /// One transcript's result: a report, or why it could not be replayed.
    enum Outcome {
        case replayed(TranscriptReplayReport)
        case failed(name: String, error: String)
    }

    func run() async throws {
        var transcripts: [Transcript] = []
        var outcomes: [Outcome] = []
        for file in files {
            do {
                transcripts.append(try Transcript.load(file))
            } catch {
                outcomes.append(.failed(name: file, error: error.description))
            }
        }
        outcomes += await replay(transcripts)
        if json {
            print(jsonReport(outcomes, coverage: coverage ? TranscriptCoverage(transcripts) : nil).serializedString())
        } else {
            for outcome in outcomes {
                switch outcome {
                case .replayed(let report): print(report)
                case .failed(let name, let error): print("\(name): not replayed: \(error)")
                }
            }
            if coverage { print("\n" + TranscriptCoverage(transcripts).description) }
        }
        if outcomes.contains(where: { if case .failed = $0 { true } else { false } }) { throw ExitCode(2) }
        if outcomes.contains(where: { if case .replayed(let report) = $0 { !report.isMatch } else { false } }) {
            throw ExitCode(1)
        }
    }

    /// Replays each transcript against the chosen target.
    func replay(_ transcripts: [Transcript]) async -> [Outcome] {
        if let broker {
            let connection: ReplayBrokerConnection
            do {
                connection = try ReplayBrokerConnection(endpoint: broker, curve: try curve.keys())
            } catch {
                return transcripts.map { .failed(name: $0.name, error: "\(error)") }
            }
            defer { connection.close() }
            var outcomes: [Outcome] = []
            for transcript in transcripts {
                do {
                    outcomes.append(.replayed(try await connection.replay(transcript, ignoring: ignore)))
                } catch {
                    outcomes.append(.failed(name: transcript.name, error: error.description))
                }
            }
            return outcomes
        }
        if let worker {
            let process: ReplayWorkerProcess
            do {
                process = try await ReplayWorkerProcess.start(executable: worker, arguments: workerArguments)
            } catch {
                return transcripts.map { .failed(name: $0.name, error: error.description) }
            }
            var outcomes: [Outcome] = []
            for transcript in transcripts {
                do {
                    outcomes.append(
                        .replayed(
                            try await transcript.replayPhases(ignoring: ignore) { intentType, phase in
                                try await process.run(phase, intentType: intentType)
                            }))
                } catch {
                    outcomes.append(.failed(name: transcript.name, error: "\(error)"))
                }
            }
            await process.stop()
            return outcomes
        }
        let provider = Examples.provider
        var outcomes: [Outcome] = []
        for transcript in transcripts {
            outcomes.append(.replayed(await TranscriptReplay(transcript, ignoring: ignore).run(on: provider)))
        }
        return outcomes
    }

    /// `{"ok": bool, "transcripts": [{"name", "ok", "compared", "unit", "mismatches": [...]} | {"name", "error"}],
    /// "coverage": {...}}`.
    func jsonReport(_ outcomes: [Outcome], coverage: TranscriptCoverage?) -> JSONValue {
        var all = true
        let reports: [JSONValue] = outcomes.map { outcome in
            switch outcome {
            case .failed(let name, let error):
                all = false
                return ["name": .string(name), "ok": false, "error": .string(error)]
            case .replayed(let report):
                all = all && report.isMatch
                let mismatches: [JSONValue] = report.mismatches.map { mismatch in
                    var object: JSONObject = [
                        "turn": .int(Int64(mismatch.turn)), "phase": .string(mismatch.phase),
                        "part": .string(mismatch.part), "path": .string(mismatch.path),
                    ]
                    object["recorded"] = mismatch.recorded
                    object["replayed"] = mismatch.replayed
                    return .object(object)
                }
                return [
                    "name": .string(report.name), "ok": .bool(report.isMatch),
                    "compared": .int(Int64(report.comparison.comparedRecords)), "unit": .string(report.unit),
                    "mismatches": .array(mismatches),
                ]
            }
        }
        var object: JSONObject = ["ok": .bool(all), "transcripts": .array(reports)]
        object["coverage"] = coverage?.jsonValue
        return .object(object)
    }
}
