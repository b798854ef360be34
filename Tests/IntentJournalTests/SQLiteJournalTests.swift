import Foundation
import IntentJournal
import Testing

/// The SQLite journal's operations: what is committed is what recovery reads back, after a close and a reopen.
@Suite struct SQLiteJournalTests {
    let directory: TemporaryDirectory

    init() throws { directory = try TemporaryDirectory() }

    @Test func everyOperationKindSurvivesCloseAndReopen() throws {
        let path = try directory.journal()
        var first = Sample.request(1, idempotencyKey: Sample.bytes("key-1"))
        first.identity = Sample.bytes("curve-public-key-text-0123456789abcdefghi")
        first.version = 1
        let second = Sample.request(2, client: "client-b", idempotencyKey: [], body: [])
        let third = Sample.request(3)
        var listener = Sample.key("client-c", "dup-1")
        listener.actAt = 1_700_000_000_500  // its own deadline, kept
        let answers = [
            Sample.result(third.key, storedAt: 10), Sample.result(Sample.key("client-d", "dup-2"), storedAt: 10),
        ]
        let replay = Sample.result(Sample.key("client-e", "replayed", version: 1), storedAt: 11, isError: true)
        let inFlight = Sample.keyRecord("key-1", state: .inFlight(request: 1), endedAt: nil)
        let completed = Sample.keyRecord(
            "key-2", state: .completed(isError: false, phase: "handle", body: Sample.bytes("{}")), endedAt: 12)
        let unknown = Sample.keyRecord("key-3", state: .outcomeUnknown, endedAt: 13)
        let removed = Sample.keyRecord("key-4", state: .outcomeUnknown, endedAt: 14)

        let journal = try SQLiteJournal(path: path)
        try journal.commit([
            .accepted(first), .accepted(second), .keyRecord(inFlight), .keyRecord(removed),
        ])
        try journal.commit([
            .attached(request: 1, listener), .handleDispatched(request: 1), .accepted(third),
            .ended(request: 3, results: answers), .stored([replay]), .keyRecord(completed), .keyRecord(unknown),
            .keyRemoved(identity: removed.identity, intentType: removed.intentType, key: removed.key),
        ])
        try journal.commit([])
        #expect(journal.statistics.commits == 2)
        #expect(journal.statistics.operations == 12)
        journal.close()

        var expectedFirst = first
        expectedFirst.handleDispatched = true
        expectedFirst.listeners = [listener]
        let state = try SQLiteJournal.recovered(path)
        #expect(state.requests == [expectedFirst, second])
        #expect(state.requests[1].idempotencyKey == [])  // an empty key is not a missing one
        #expect(state.requests[0].idempotencyKey == Sample.bytes("key-1"))
        #expect(state.results == answers + [replay])
        #expect(state.keyRecords == [inFlight, completed, unknown])
        #expect(state.nextRequestID == 4)
    }

    @Test func anEmptyJournalRecoversNothingAndStartsAtOne() throws {
        let state = try SQLiteJournal.recovered(try directory.journal())
        #expect(state == JournalState(requests: [], results: [], keyRecords: [], nextRequestID: 1))
    }

    @Test func endedRemovesTheRequestWithItsListenersAndStoresItsResults() throws {
        let path = try directory.journal()
        let journal = try SQLiteJournal(path: path)
        let request = Sample.request(7)
        let listener = Sample.key("client-x", "dup")
        try journal.commit([.accepted(request), .attached(request: 7, listener), .accepted(Sample.request(8))])
        let results = [Sample.result(request.key, storedAt: 100), Sample.result(listener, storedAt: 100)]
        try journal.commit([.ended(request: 7, results: results)])
        // A later result for the same key replaces the earlier one.
        let replacement = Sample.result(listener, storedAt: 200, isError: true)
        try journal.commit([.stored([replacement])])
        journal.close()

        let state = try SQLiteJournal.recovered(path)
        #expect(state.requests.map(\.id) == [8])
        #expect(state.results == [results[0], replacement])
        #expect(state.nextRequestID == 9)
        let summary = try SQLiteJournal.check(path: path)
        #expect(summary.listeners == 0)
    }

    @Test func requestIDsAreNeverReusedAfterEveryRequestEnded() throws {
        let path = try directory.journal()
        let journal = try SQLiteJournal(path: path)
        try journal.commit([.accepted(Sample.request(41)), .accepted(Sample.request(40))])
        try journal.commit([.ended(request: 41, results: []), .ended(request: 40, results: [])])
        journal.close()
        let state = try SQLiteJournal.recovered(path)
        #expect(state.requests.isEmpty)
        #expect(state.nextRequestID == 42)
    }

    @Test func theNextIDSurvivesEndingTheHighestRequestAfterAReopen() throws {
        let path = try directory.journal()
        var journal = try SQLiteJournal(path: path)
        try journal.commit([.accepted(Sample.request(1)), .accepted(Sample.request(2)), .accepted(Sample.request(3))])
        journal.close()
        // A new session ends the highest id, which only its row recorded until then.
        journal = try SQLiteJournal(path: path)
        try journal.commit([.ended(request: 3, results: [])])
        journal.close()
        #expect(try SQLiteJournal.recovered(path).nextRequestID == 4)
        journal = try SQLiteJournal(path: path)
        try journal.commit([.accepted(Sample.request(4))])
        try journal.commit([.ended(request: 4, results: []), .ended(request: 2, results: [])])
        try journal.commit([.ended(request: 1, results: [])])
        journal.close()
        let state = try SQLiteJournal.recovered(path)
        #expect(state.requests.isEmpty)
        #expect(state.nextRequestID == 5)
        #expect(try SQLiteJournal.check(path: path).nextRequestID == 5)
    }

    @Test func aReplacedResultCountsOnceAndExpiresWithoutItsReplacement() throws {
        let path = try directory.journal()
        let journal = try SQLiteJournal(path: path)
        let key = Sample.key("c", "again")
        let first = Sample.result(key, storedAt: 100)
        let other = Sample.result(Sample.key("c", "other"), storedAt: 150)
        let second = Sample.result(key, storedAt: 200, isError: true)
        try journal.commit([.stored([first, other])])
        try journal.commit([.stored([second])])
        #expect(try SQLiteJournal.check(path: path).results == 2)
        #expect(try journal.recover().results == [other, second])
        // The replaced result expires on its own time; its replacement stays.
        try journal.commit([.resultsExpired(storedBefore: 160)])
        #expect(try journal.recover().results == [second])
        #expect(try SQLiteJournal.check(path: path).results == 1)
        journal.close()
    }

    @Test func anEndedRequestsResultExpiresOnItsTimeAndItsIDStaysUsed() throws {
        let path = try directory.journal()
        let journal = try SQLiteJournal(path: path)
        let (early, late) = (Sample.request(1), Sample.request(2))
        let listener = Sample.key("client-l", "dup")
        try journal.commit([.accepted(early), .accepted(late), .attached(request: 2, listener)])
        let lateResults = [Sample.result(late.key, storedAt: 300), Sample.result(listener, storedAt: 300)]
        try journal.commit([.ended(request: 2, results: lateResults)])
        try journal.commit([.ended(request: 1, results: [Sample.result(early.key, storedAt: 100)])])
        // An ended request is neither open nor able to take a duplicate or a handle job.
        for batch: [JournalOperation] in [
            [.attached(request: 2, Sample.key("c", "x"))], [.handleDispatched(request: 2)],
            [.ended(request: 2, results: [])],
            [.accepted(Sample.request(2))],
        ] {
            #expect(throws: JournalError.self) { try journal.commit(batch) }
        }
        var state = try journal.recover()
        #expect(state.requests.isEmpty)
        #expect(state.results == lateResults + [Sample.result(early.key, storedAt: 100)])
        var summary = try SQLiteJournal.check(path: path)
        #expect(summary.openRequests == 0 && summary.results == 3 && summary.listeners == 0)
        try journal.commit([.resultsExpired(storedBefore: 200)])
        state = try journal.recover()
        #expect(state.results == lateResults)
        try journal.commit([.resultsExpired(storedBefore: 400)])
        journal.close()
        state = try SQLiteJournal.recovered(path)
        #expect(state.results.isEmpty)
        #expect(state.nextRequestID == 3)
        summary = try SQLiteJournal.check(path: path)
        #expect(summary.results == 0 && summary.nextRequestID == 3)
    }

    @Test func expiryRemovesOnlyWhatEndedBeforeTheCutoff() throws {
        let path = try directory.journal()
        let journal = try SQLiteJournal(path: path)
        let old = Sample.result(Sample.key("c", "old"), storedAt: 100)
        let boundary = Sample.result(Sample.key("c", "boundary"), storedAt: 200)
        let fresh = Sample.result(Sample.key("c", "fresh"), storedAt: 300)
        let oldKey = Sample.keyRecord("old", state: .outcomeUnknown, endedAt: 100)
        let boundaryKey = Sample.keyRecord("boundary", state: .outcomeUnknown, endedAt: 200)
        let running = Sample.keyRecord("running", state: .inFlight(request: 1), endedAt: nil)
        try journal.commit([
            .stored([old, boundary, fresh]), .keyRecord(oldKey), .keyRecord(boundaryKey), .keyRecord(running),
        ])
        try journal.commit([.resultsExpired(storedBefore: 200), .keyRecordsExpired(endedBefore: 200)])
        var state = try journal.recover()
        #expect(state.results == [boundary, fresh])
        #expect(state.keyRecords == [boundaryKey, running])
        try journal.commit([.resultsExpired(storedBefore: 1000), .keyRecordsExpired(endedBefore: 1000)])
        journal.close()
        state = try SQLiteJournal.recovered(path)
        #expect(state.results.isEmpty)
        #expect(state.keyRecords == [running])  // in flight: never expires
    }

    @Test func aFailedCommitWritesNothingOfItsBatch() throws {
        let path = try directory.journal()
        let journal = try SQLiteJournal(path: path)
        try journal.commit([.accepted(Sample.request(1))])
        let before = try journal.recover()
        let bad: [[JournalOperation]] = [
            // A request id accepted twice (primary key).
            [
                .stored([Sample.result(Sample.key("c", "x"), storedAt: 1)]), .accepted(Sample.request(2)),
                .accepted(Sample.request(1)),
            ],
            // An ending for a request that is not open.
            [.accepted(Sample.request(3)), .handleDispatched(request: 1), .ended(request: 99, results: [])],
            // A duplicate attached to a request that is not open (foreign key).
            [
                .keyRecord(Sample.keyRecord("k", state: .outcomeUnknown, endedAt: 1)),
                .attached(request: 98, Sample.key("c", "d")),
            ],
            // A handle dispatched for a request that is not open.
            [
                .keyRemoved(identity: [], intentType: [], key: []), .accepted(Sample.request(4)),
                .handleDispatched(request: 97),
            ],
        ]
        for batch in bad {
            let error = #expect(throws: JournalError.self) { try journal.commit(batch) }
            #expect(error?.code == .invalidOperation)
            #expect(error?.message.contains(path) == true)
            #expect(try journal.recover() == before)
        }
        // The journal stays usable after a failed commit.
        try journal.commit([.accepted(Sample.request(5))])
        journal.close()
        let after = try SQLiteJournal.recovered(path)
        #expect(after.requests.map(\.id) == [1, 5])
        #expect(after.results.isEmpty && after.keyRecords.isEmpty)
        #expect(after.nextRequestID == 6)
    }

    @Test func aCommitIsVisibleToAnotherConnectionBeforeTheJournalCloses() throws {
        let path = try directory.journal()
        let journal = try SQLiteJournal(path: path)
        try journal.commit([.accepted(Sample.request(1)), .handleDispatched(request: 1)])
        try journal.commit([.stored([Sample.result(Sample.key("c", "r"), storedAt: 5)])])
        // `check` reads through its own SQLite connection while the journal is open.
        let summary = try SQLiteJournal.check(path: path)
        #expect(summary.openRequests == 1)
        #expect(summary.handleDispatched == 1)
        #expect(summary.results == 1)
        #expect(summary.nextRequestID == 2)
        journal.close()
    }

    @Test func aClosedJournalRefusesToCommit() throws {
        let journal = try SQLiteJournal(path: try directory.journal())
        journal.close()
        journal.close()
        #expect(throws: JournalError.self) { try journal.commit([.accepted(Sample.request(1))]) }
        #expect(throws: JournalError.self) { try journal.recover() }
    }

    @Test func theIntervalPolicySyncsWhenDueAndOnClose() throws {
        let path = try directory.journal()
        // Not due before the interval: an hour, so that a slow machine never makes it due early. The later steps
        // use a 20 ms interval and sleep past it (a sleep that runs long only makes them more due).
        let patient = try SQLiteJournal(path: path, sync: .interval(.seconds(3600)))
        try patient.commit([.accepted(Sample.request(1))])
        #expect(patient.statistics.syncs == 0)
        try patient.syncIfDue()
        #expect(patient.statistics.syncs == 0)
        patient.close()
        let journal = try SQLiteJournal(path: path, sync: .interval(.milliseconds(20)))
        try journal.commit([.accepted(Sample.request(2))])
        Thread.sleep(forTimeInterval: 0.05)
        try journal.syncIfDue()
        #expect(journal.statistics.syncs == 1, "synced once: by the commit if it was due already, else now")
        try journal.syncIfDue()  // nothing new to sync
        #expect(journal.statistics.syncs == 1)
        try journal.commit([.accepted(Sample.request(3))])
        let beforeSleep = journal.statistics.syncs
        Thread.sleep(forTimeInterval: 0.05)
        try journal.commit([.accepted(Sample.request(4))])  // due: the commit syncs by itself
        #expect(journal.statistics.syncs == beforeSleep + 1)
        #expect(journal.statistics.commits == 3)
        #expect(journal.statistics.commitLatency.max > 0)
        journal.close()
        #expect(try SQLiteJournal.recovered(path).requests.map(\.id) == [1, 2, 3, 4])
    }

    @Test func everyCommitNeverRunsIntervalSyncs() throws {
        let journal = try SQLiteJournal(path: try directory.journal(), sync: .everyCommit)
        try journal.commit([.accepted(Sample.request(1))])
        try journal.syncIfDue()
        #expect(journal.statistics.syncs == 0)
        #expect(journal.statistics.commitLatency.p50 > 0)
        journal.close()
    }
}

/// The memory journal on its own: it starts from a recovered state and refuses to work once closed.
@Suite struct MemoryJournalTests {
    @Test func itStartsFromAStateAndKeepsIDsAboveIt() throws {
        let state = JournalState(
            requests: [Sample.request(3)], results: [Sample.result(Sample.key("c", "r"), storedAt: 1)],
            keyRecords: [], nextRequestID: 10)
        let journal = MemoryJournal(state)
        #expect(try journal.recover() == state)
        try journal.commit([.ended(request: 3, results: [])])
        #expect(try journal.recover().nextRequestID == 10)
        #expect(journal.statistics.commits == 1)
        journal.close()
        #expect(throws: JournalError.self) { try journal.commit([.accepted(Sample.request(10))]) }
    }
}
