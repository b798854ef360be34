/// What a load report says about the run besides its figures: when and where it ran, against what, with which
/// command, and how it fared against the gate. `concierge load --html` fills it in.
public struct LoadReportContext: Sendable {
    /// When the run started, e.g. `2026-11-28 06:30:12 UTC`.
    public var date: String
    /// The host the load client ran on.
    public var host: String
    /// The broker endpoint(s) driven.
    public var endpoint: String
    /// The load client's version (the concierge version, or its git revision).
    public var version: String
    /// The whole command line, as run.
    public var commandLine: String
    /// The gate's limits against the run (``LoadGate/checks(of:)``); empty when no limit was given.
    public var gate: [LoadGateCheck]

    public init(
        date: String, host: String, endpoint: String, version: String, commandLine: String,
        gate: [LoadGateCheck] = []
    ) {
        self.date = date
        self.host = host
        self.endpoint = endpoint
        self.version = version
        self.commandLine = commandLine
        self.gate = gate
    }
}
