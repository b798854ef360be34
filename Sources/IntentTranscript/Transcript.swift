/// One conversation's transcript, read whole: its records in file order, checked to be in a conversation's order (a
/// `start` first, then turns, phases and replies, and at most one `end`, last).
///
/// A file without `end` is a conversation still open, or cut by a crash: it reads, with ``isEnded`` false. A last
/// line without its newline that is not a whole record (the broker died while writing it) is left out, and
/// ``cutLine`` says which line it was.
///
/// ```swift
/// let transcript = try Transcript.load("/var/lib/concierge/transcripts/c-1-5a1e3f0c.jsonl")
/// print(transcript.start.intentType, transcript.phases.count, transcript.end?.ending ?? "open")
/// ```
public struct Transcript: Sendable, Hashable {
    /// The records, in file order.
    public let records: [TranscriptRecord]
    /// The file read, if any.
    public let path: String?
    /// The line number of an unfinished last line that was left out, if there was one.
    public let cutLine: Int?

    /// A transcript of `records`, checked to be in a conversation's order.
    /// - Throws: ``TranscriptError`` `empty` or `out-of-order` (its line is the record's position, from 1).
    public init(records: [TranscriptRecord], path: String? = nil) throws(TranscriptError) {
        try self.init(records: records, lines: Array(1...max(1, records.count)), path: path, cutLine: nil)
    }

    init(records: [TranscriptRecord], lines: [Int], path: String?, cutLine: Int?) throws(TranscriptError) {
        guard let first = records.first else {
            throw TranscriptError(code: .empty, message: "the transcript has no records", path: path)
        }
        guard case .start = first else {
            throw TranscriptError(
                code: .outOfOrder, message: "the first record is \(first.kind); a transcript starts with start",
                line: lines[0], path: path)
        }
        for (index, record) in records.enumerated().dropFirst() {
            if case .start = record {
                throw TranscriptError(
                    code: .outOfOrder, message: "a second start record", line: lines[index], path: path)
            }
            if case .end = records[index - 1] {
                throw TranscriptError(
                    code: .outOfOrder, message: "a \(record.kind) record after the end record", line: lines[index],
                    path: path)
            }
        }
        self.records = records
        self.path = path
        self.cutLine = cutLine
    }

    /// Reads a transcript from the bytes of a JSON Lines file (`\n` or `\r\n` line ends).
    /// - Throws: ``TranscriptError`` with the line number of the first line that is not a record, or `empty` /
    ///   `out-of-order`.
    public init(jsonLines bytes: [UInt8], path: String? = nil) throws(TranscriptError) {
        var records: [TranscriptRecord] = []
        var lines: [Int] = []
        var cutLine: Int?
        let pieces = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        let endsWithNewline = bytes.last == UInt8(ascii: "\n")
        for (index, piece) in pieces.enumerated() {
            let number = index + 1
            var line = piece[...]
            if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
            let isLast = index == pieces.count - 1
            if isLast && line.isEmpty { break }  // the newline ending the last record
            do {
                records.append(try TranscriptRecord(jsonLine: line))
                lines.append(number)
            } catch {
                // A last line without its newline was being written when the writer stopped: the conversation
                // was cut there, and the lines before it still stand.
                if isLast && !endsWithNewline && error.code == .notJSON && !records.isEmpty {
                    cutLine = number
                    break
                }
                throw error.at(line: number, path: path)
            }
        }
        try self.init(records: records, lines: lines, path: path, cutLine: cutLine)
    }

    /// Reads the transcript at `path`.
    /// - Throws: ``TranscriptError`` `io` when the file cannot be read, else as ``init(jsonLines:path:)``.
    public static func load(_ path: String) throws(TranscriptError) -> Transcript {
        try Transcript(jsonLines: try _File.read(path), path: path)
    }

    /// The start record.
    public var start: TranscriptRecord.Start {
        guard case .start(let start) = records[0] else { preconditionFailure("a transcript begins with start") }
        return start
    }

    /// The end record, or nil while the conversation is open (or was cut).
    public var end: TranscriptRecord.End? {
        guard case .end(let end) = records.last else { return nil }
        return end
    }

    /// Whether the conversation ended (the file has its end record).
    public var isEnded: Bool { end != nil }

    /// The turn records, in order.
    public var turns: [TranscriptRecord.Turn] {
        records.compactMap { if case .turn(let turn) = $0 { turn } else { nil } }
    }

    /// The phase records, in order.
    public var phases: [TranscriptRecord.Phase] {
        records.compactMap { if case .phase(let phase) = $0 { phase } else { nil } }
    }

    /// The reply records, in order.
    public var replies: [TranscriptRecord.Reply] {
        records.compactMap { if case .reply(let reply) = $0 { reply } else { nil } }
    }

    /// The transcript as a JSON Lines file: one line per record, each ending with a newline.
    public var jsonLines: String {
        records.map { $0.jsonLine() + "\n" }.joined()
    }
}
