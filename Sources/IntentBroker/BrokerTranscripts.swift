import ConciergeJSON
import IntentWire
import Logging

#if canImport(Glibc)
    import Glibc
#endif

/// Writes the transcripts of recorded conversations (`Docs/TRANSCRIPTS.md`): one JSON Lines file per conversation
/// in ``BrokerConfiguration/transcriptDirectory``, named after the conversation id and a hash of its owner, each line
/// with the wall-clock time added and flushed as written (a crash leaves every line written so far).
///
/// Used from the broker loop's thread only; conversations are few next to requests, so the writes stay on it.
final class BrokerTranscripts {
    let directory: String
    let logger: Logger
    private var files: [ConversationKey: (file: UnsafeMutablePointer<FILE>, path: String)] = [:]

    init(directory: String, logger: Logger) {
        self.directory = directory
        self.logger = logger
        mkdir(directory, 0o755)
    }

    deinit {
        for (file, _) in files.values { fclose(file) }
    }

    /// The file name of a conversation's transcript: its id with bytes outside `[A-Za-z0-9._-]` escaped `%XX`,
    /// then `-` and 8 hex digits of the SHA-256 of owner and id (two clients may use the same id).
    static func fileName(_ key: ConversationKey) -> String {
        var name = ""
        for byte in key.id {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"):
                name.append(Character(Unicode.Scalar(byte)))
            default:
                name += "%" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
            }
        }
        let digest = SHA256.hash(key.scope + [0] + key.id).prefix(4)
        return name + "-" + digest.map { String($0, radix: 16).leftPadded(to: 2) }.joined() + ".jsonl"
    }

    func write(_ line: TranscriptLine) {
        var record = line.line
        record["at"] = .string(Self.now())
        switch line.step {
        case .begin:
            let path = directory + "/" + Self.fileName(line.conversation)
            guard let file = fopen(path, "a") else {
                logger.warning(
                    "cannot open a conversation's transcript", metadata: ["path": "\(path)", "errno": "\(errno)"])
                return
            }
            files[line.conversation] = (file, path)
            append(record, to: file)
        case .append:
            if let (file, _) = files[line.conversation] { append(record, to: file) }
        case .finish:
            guard let (file, _) = files.removeValue(forKey: line.conversation) else { return }
            append(record, to: file)
            fclose(file)
        case .discard:
            guard let (file, path) = files.removeValue(forKey: line.conversation) else { return }
            fclose(file)
            unlink(path)
        }
    }

    private func append(_ record: JSONObject, to file: UnsafeMutablePointer<FILE>) {
        var bytes = JSONValue.object(record).serialized()
        bytes.append(UInt8(ascii: "\n"))
        _ = bytes.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, file) }
        fflush(file)
    }

    /// The wall-clock time, UTC ISO 8601 with milliseconds.
    static func now() -> String {
        var wall = timespec()
        clock_gettime(CLOCK_REALTIME, &wall)
        var seconds = wall.tv_sec
        var parts = tm()
        gmtime_r(&seconds, &parts)
        let milliseconds = Int(wall.tv_nsec) / 1_000_000
        func two(_ n: Int32) -> String { String(n).leftPadded(to: 2) }
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T\(two(parts.tm_hour)):"
            + "\(two(parts.tm_min)):\(two(parts.tm_sec)).\(String(milliseconds).leftPadded(to: 3))Z"
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
