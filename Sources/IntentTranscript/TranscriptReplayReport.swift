/// What replaying one transcript gave: the comparison with the recorded answers, and how much was replayed.
///
/// Its ``description`` is what `concierge replay` prints for the transcript: `PATH: ok (5 phases)`, or
/// `PATH: 2 mismatches in 5 phases` followed by the diff (``TranscriptComparison``).
public struct TranscriptReplayReport: Sendable, Hashable, CustomStringConvertible {
    /// The transcript's file, or its conversation id when it was not read from a file.
    public let name: String
    /// The comparison: its mismatches and the paths it ignored.
    public let comparison: TranscriptComparison
    /// What was replayed, in words: `phases` (against handlers or a worker) or `turns` (against a broker).
    public let unit: String

    /// Creates a report.
    public init(name: String, comparison: TranscriptComparison, unit: String) {
        self.name = name
        self.comparison = comparison
        self.unit = unit
    }

    /// The mismatches (empty: the replay matched).
    public var mismatches: [TranscriptComparison.Mismatch] { comparison.mismatches }

    /// Whether the replay matched the recording.
    public var isMatch: Bool { comparison.isMatch }

    public var description: String {
        let count = "\(comparison.comparedRecords) \(unit)"
        guard !comparison.isMatch else { return "\(name): ok (\(count))" }
        let mismatches = comparison.mismatches.count == 1 ? "1 mismatch" : "\(comparison.mismatches.count) mismatches"
        return "\(name): \(mismatches) in \(count)\n" + comparison.description
    }
}
