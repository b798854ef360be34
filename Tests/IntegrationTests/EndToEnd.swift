import Testing

/// The parent of every suite in this target. They start real broker, worker and pool processes (or a broker in
/// process with real sockets) and measure what those do in real time, so they run one at a time: suites running
/// side by side would compete for the cores, and on a small or busy machine slow each other's workers enough to
/// get requests shed (`busy`, PROTOCOL.md 6.3) or heartbeats missed. Each suite is nested here with
/// `extension EndToEnd`. `Scripts/test` also runs this target apart from the unit tests, with `--no-parallel`.
@Suite(.serialized) enum EndToEnd {}
