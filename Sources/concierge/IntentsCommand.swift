import ArgumentParser
import ConciergeCommandLine
import ConciergeJSON
import Foundation
import IntentClient
import IntentWire
import IntentWorker

/// `concierge intents`: the intent types a broker serves, the definitions its workers announced and which workers
/// serve each (PROTOCOL.md sections 5.14 and 5.16), read from one STATS answer of its backend.
struct IntentsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "intents",
        abstract: "List the intent types a broker serves, with their definitions and the workers serving each.",
        discussion: """
            Asks the broker's backend (where workers connect) for STATS once. Each line is one definition of one \
            intent type: its version, the first digits of its digest (sha256 of its canonical JSON) and the workers \
            that announced it. A type served by workers older than CIPW04 shows `(not announced)`. A type served in \
            several versions (a rolling upgrade, or a breaking change served side by side) has one line per version, \
            and each later version says whether it is compatible with the one before (PROTOCOL.md 5.18): requests \
            that name no version run under the oldest. Workers the broker refused (a different definition under a \
            served version, or forbidden) are listed after the table. --definition TYPE prints the served \
            definition of TYPE as JSON (the format of Schemas/intents/); --json prints every definition.
            """
    )

    @Option(help: "The broker's backend endpoint (the one workers connect to).")
    var broker: String = Defaults.worker.brokerEndpoint

    @Option(help: "Print the definition of this intent type as JSON (exit 1 if the broker serves none).")
    var definition: String?

    @Flag(help: "Print every served definition as one JSON object: type -> [{digest, version, workers, definition}].")
    var json = false

    @Option(help: "Milliseconds to wait for the broker's answer.")
    var timeoutMs = 2000

    @OptionGroup var curve: CurveClientOptions

    func validate() throws {
        do { try EndpointSyntax.check(broker, connecting: true) } catch {
            throw ValidationError("--broker: \(error.message)")
        }
        guard (10...60_000).contains(timeoutMs) else { throw ValidationError("--timeout-ms must be from 10 to 60000") }
    }

    func run() throws {
        let stats: BrokerStats
        do {
            stats = try BrokerStatsQuery.ask(broker, curve: try curve.keys(), timeout: .milliseconds(timeoutMs))
        } catch {
            printError("concierge intents: \(error)")
            throw ExitCode(2)
        }
        if let definition {
            guard let type = stats.intentTypes.first(where: { $0.name == definition }) else {
                printError("concierge intents: the broker at \(broker) serves no intent type \(definition)")
                throw ExitCode(1)
            }
            guard !type.definitions.isEmpty else {
                printError(
                    "concierge intents: the workers of \(definition) did not announce its definition (CIPW03 or older)")
                throw ExitCode(1)
            }
            for served in type.definitions { print(served.definition.serializedString()) }
            return
        }
        if json {
            var object: JSONObject = [:]
            for type in stats.intentTypes {
                object[type.name] = .array(
                    type.definitions.map { served in
                        .object([
                            "digest": .string(served.digest), "version": .int(Int64(served.version)),
                            "workers": .array(served.workers.map { .string($0) }), "definition": served.definition,
                        ])
                    })
            }
            print(JSONValue.object(object).serializedString())
            return
        }
        print(Self.table(stats))
    }

    /// The table: one row per definition of each served type (types no worker serves now are left out).
    static func table(_ stats: BrokerStats) -> String {
        var rows: [[String]] = [["TYPE", "VERSION", "DIGEST", "PARAMETERS", "WORKERS", "CHANGE"]]
        let namesByType = Dictionary(
            grouping: stats.workers.flatMap { worker in worker.intents.map { ($0, worker.name) } }
        ) {
            $0.0
        }.mapValues { $0.map(\.1) }
        for type in stats.intentTypes.sorted(by: { $0.name < $1.name }) where type.workers > 0 {
            var announced: Set<String> = []
            var previous: BrokerStats.Definition?
            for served in type.definitions.sorted(by: { $0.version < $1.version }) {
                defer { previous = served }
                let change =
                    previous.map { earlier in
                        DefinitionCompatibility.incompatibility(of: served.definition, with: earlier.definition).map {
                            "breaking: \($0)"
                        } ?? "compatible with \(earlier.version)"
                    } ?? (type.definitions.count > 1 ? "oldest: requests naming no version" : "")
                announced.formUnion(served.workers)
                let parameters = served.definition["parameters"]?.arrayValue?.compactMap { parameter -> String? in
                    guard let name = parameter["name"]?.stringValue else { return nil }
                    return parameter["required"]?.boolValue == true ? name + "*" : name
                }
                rows.append([
                    type.name, String(served.version), String(served.digest.dropFirst("sha256:".count).prefix(12)),
                    parameters?.joined(separator: ",") ?? "", served.workers.joined(separator: ","), change,
                ])
            }
            let others = (namesByType[type.name] ?? []).filter { !announced.contains($0) }
            if !others.isEmpty {
                rows.append([type.name, "-", "(not announced)", "", others.joined(separator: ","), ""])
            }
        }
        let widths = (0..<6).map { column in rows.map { $0[column].count }.max() ?? 0 }
        var text =
            rows.map { row in
                row.enumerated().map { column, text in
                    column == row.count - 1 ? text : text + String(repeating: " ", count: widths[column] - text.count)
                }.joined(separator: "  ").trimmingCharacters(in: .whitespaces)
            }.joined(separator: "\n") + "\n(* required)"
        if !stats.refused.isEmpty {
            text += "\nrefused workers (most recent last; not registered, get no jobs):"
            for refusal in stats.refused {
                let definition =
                    refusal.version > 0
                    ? " version \(refusal.version) \(refusal.digest.dropFirst("sha256:".count).prefix(12))" : ""
                let intent = refusal.intent.isEmpty ? "" : " \(refusal.intent)"
                text += "\n  \(refusal.worker)\(intent)\(definition): \(refusal.code): \(refusal.reason)"
            }
        }
        return text
    }

    private func printError(_ text: String) {
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }
}
