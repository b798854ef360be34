import IntentTranscript
import Logging

#if canImport(Glibc)
    import Glibc
#endif

/// Writes the transcripts of recorded conversations (`Docs/TRANSCRIPTS.md`) with IntentTranscript's writer: one
/// JSON Lines file per conversation in ``BrokerConfiguration/transcriptDirectory``, each line written as it comes
/// (a crash leaves every line written so far), with the wall-clock time filled in.
///
/// Used from the broker loop's thread only; conversations are few next to requests, so the writes stay on it. A
/// transcript that cannot be written is logged and left out; the conversation goes on.
final class BrokerTranscripts {
    let logger: Logger
    private let writer: TranscriptWriter?
    private var files: [ConversationKey: TranscriptWriter.File] = [:]

    init(directory: String, logger: Logger) {
        self.logger = logger
        do {
            writer = try TranscriptWriter(directory: directory)
        } catch {
            logger.error(
                "cannot write transcripts: no conversation will be recorded",
                metadata: ["directory": "\(directory)", "error": "\(error)"])
            writer = nil
        }
    }

    func write(_ line: TranscriptLine) {
        guard let writer else { return }
        do throws(TranscriptError) {
            switch line.step {
            case .begin:
                guard let record = line.record.map(Self.stamped) else { return }
                files[line.conversation] = try writer.begin(
                    conversation: line.conversation.name, scope: line.conversation.scope, start: record)
            case .append:
                guard let file = files[line.conversation], let record = line.record.map(Self.stamped) else { return }
                try writer.append(record, to: file)
            case .finish:
                guard let file = files.removeValue(forKey: line.conversation) else { return }
                defer { writer.finish(file) }
                if let record = line.record.map(Self.stamped) { try writer.append(record, to: file) }
            case .discard:
                guard let file = files.removeValue(forKey: line.conversation) else { return }
                writer.finish(file)
                unlink(file.path)
            }
        } catch {
            logger.warning(
                "could not write a conversation's transcript",
                metadata: ["conversation": "\(line.conversation.name)", "error": "\(error)"])
        }
    }

    /// The record with the wall-clock time as its `at`.
    private static func stamped(_ record: TranscriptRecord) -> TranscriptRecord {
        let now = TranscriptClock.timestamp()
        switch record {
        case .start(var start):
            start.at = now
            return .start(start)
        case .turn(var turn):
            turn.at = now
            return .turn(turn)
        case .end(var end):
            end.at = now
            return .end(end)
        case .phase, .reply:
            return record
        }
    }
}
