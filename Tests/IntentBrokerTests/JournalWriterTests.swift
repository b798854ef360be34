import IntentJournal
import Testing
import ZeroMQ

@testable import IntentBroker

/// The journal's writer thread (pipelined group commit): a commit submitted to it is written by the journal, its
/// outcome comes back (and wakes the loop's event fd), and a failing commit's error comes back unchanged.
@Suite struct JournalWriterTests {
    static func accepted(_ id: UInt64) -> JournalOperation {
        .accepted(
            JournalRequest(
                id: id, client: Array("c".utf8), requestID: Array("r\(id)".utf8), identity: [],
                intentType: Array("Echo".utf8), phase: "handle", body: Array("{}".utf8), deadlineMilliseconds: 3000,
                acceptedAt: 1_700_000_000_000, idempotencyKey: nil, attempt: 1, version: 2))
    }

    @Test func aSubmittedCommitIsWrittenAndItsOutcomeComesBack() throws {
        let journal = MemoryJournal()
        let done = EventFD()
        let writer = JournalWriter(journal: journal, done: done)
        defer { writer.stop() }
        for batch in 0..<20 {
            writer.submit((1...5).map { Self.accepted(UInt64(batch * 5 + $0)) })
            let outcome = writer.wait()
            #expect((try? outcome.get()) != nil, "\(outcome)")
        }
        #expect(try journal.recover().requests.count == 100)
        #expect(journal.statistics.commits == 20)
        #expect(writer.takeOutcome() == nil, "each outcome is taken once")
    }

    @Test func aFailedCommitsErrorComesBack() throws {
        let journal = MemoryJournal()
        let writer = JournalWriter(journal: journal, done: EventFD())
        defer { writer.stop() }
        writer.submit([Self.accepted(1)])
        #expect((try? writer.wait().get()) != nil)
        // The same request accepted twice: the journal refuses the commit, and nothing of it is written.
        writer.submit([Self.accepted(2), Self.accepted(1)])
        guard case .failure(let error) = writer.wait() else {
            Issue.record("a commit the journal refused came back as written")
            return
        }
        #expect(error.code == .invalidOperation)
        #expect(try journal.recover().requests.map(\.id) == [1])
    }
}
