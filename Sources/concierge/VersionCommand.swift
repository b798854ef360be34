import ArgumentParser
import ConciergeGateway
import ConciergeJSON
import ConciergeTracing
import IntentJournal

/// `concierge version`: the revision this binary was built from and the package traits it was built with (README,
/// "Build options"), so that a script or test can tell a default build from a full one before using `--tracing`,
/// `--tls-cert` or a `postgres://` journal.
struct VersionCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "version",
        abstract: "Print the revision and the optional features (package traits) this binary was built with.",
        discussion: """
            Traits: Tracing (OTLP export, --tracing), TLS (the gateway's HTTPS), PostgreSQL (postgres:// journals, \
            --standby). The default build has none; Scripts/build-release --traits Full has all three.
            """
    )

    @Flag(
        help:
            "One JSON object: {\"revision\": …, \"traits\": {\"Tracing\": bool, \"TLS\": bool, \"PostgreSQL\": bool}}.")
    var json = false

    /// Each optional feature and whether this binary has it.
    static let traits: [(name: String, built: Bool)] = [
        ("Tracing", TracingBootstrap.isBuilt), ("TLS", GatewayTLS.isBuilt),
        ("PostgreSQL", JournalLocation.postgresIsBuilt),
    ]

    func run() throws {
        if json {
            let traits = JSONValue.object(JSONObject(Self.traits.map { ($0.name, JSONValue.bool($0.built)) }))
            print(
                JSONValue.object(["revision": .string(ConciergeVersion.current), "traits": traits]).serializedString())
        } else {
            let built = Self.traits.filter(\.built).map(\.name)
            print(
                "concierge \(ConciergeVersion.current); traits: \(built.isEmpty ? "none (default build)" : built.joined(separator: ", "))"
            )
        }
    }
}
