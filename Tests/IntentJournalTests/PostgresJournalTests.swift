// Built with the package trait PostgreSQL only (README, "Build options"): `swift test --traits Full`.
#if PostgreSQL
    import ConciergeTestKit
    import Foundation
    import Testing

    @testable import IntentJournal

    /// The PostgreSQL journal against a private PostgreSQL server (one per test, started by the test; each check
    /// that needs a fresh journal uses a database of its own).
    @Suite(.serialized) struct PostgresJournalTests {
        let server: PostgresServer

        init() throws { server = try PostgresServer() }

        /// A new database on the test server, with or without a journal in it; returns its URL.
        func database(_ name: String, create: Bool = true) throws -> String {
            try server.sql("CREATE DATABASE \(name)")
            let url = "postgres://concierge@\(server.host):\(server.port)/\(name)"
            if create { try PostgresJournal.create(url: url) }
            return url
        }

        /// Expects `body` to throw a ``JournalError`` with `code`; returns it.
        @discardableResult
        func expectError(
            _ code: JournalError.Code, sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void
        ) -> JournalError? {
            do {
                try body()
                Issue.record("expected \(code), nothing was thrown", sourceLocation: sourceLocation)
            } catch let error as JournalError {
                #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
                return error
            } catch {
                Issue.record("expected \(code), got \(error)", sourceLocation: sourceLocation)
            }
            return nil
        }

        @Test func everyOperationKindRoundTrips() throws {
            let url = try database("roundtrip")
            let journal = try PostgresJournal(url: url)
            let seeds = journal.fingerprintSeeds
            #expect(seeds.count == 2 && seeds[0] != seeds[1])
            #expect(try journal.recover() == JournalState())
            var first = Sample.request(1, idempotencyKey: Sample.bytes("key-1"))
            first.listeners = [Sample.key("client-b", "dup-0", version: 1)]
            let operations: [[JournalOperation]] = [
                [
                    .accepted(first), .accepted(Sample.request(2)), .accepted(Sample.request(3, body: [])),
                    .attached(
                        request: 1,
                        JournalRequestKey(
                            client: Sample.bytes("client-c"), requestID: Sample.bytes("dup-1"), version: 2,
                            actAt: 1_700_000_000_500)),
                    .handleDispatched(request: 2),
                    .keyRecord(Sample.keyRecord("key-1", state: .inFlight(request: 1), endedAt: nil)),
                    .keyRecord(Sample.keyRecord("key-2", state: .outcomeUnknown, endedAt: 50)),
                    .keyRecord(
                        Sample.keyRecord(
                            "key-3", state: .completed(isError: true, phase: "error", body: []), endedAt: 60)),
                ],
                [
                    .ended(
                        request: 3,
                        results: [Sample.result(Sample.key("client-a", "req-3"), storedAt: 100, isError: true)]),
                    .stored([
                        Sample.result(Sample.key("client-d", "old"), storedAt: 10),
                        Sample.result(Sample.key("client-d", "newer"), storedAt: 200),
                    ]),
                    // Replaces the first stored result for that key (and moves it last).
                    .stored([Sample.result(Sample.key("client-d", "old"), storedAt: 300)]),
                    .keyRecord(
                        Sample.keyRecord(
                            "key-4", state: .completed(isError: false, phase: "handle", body: [1, 2, 3]), endedAt: 70)),
                    .keyRemoved(
                        identity: Sample.bytes("identity-1"), intentType: Sample.bytes("SendPayment"),
                        key: Sample.bytes("key-2")),
                    .keyRecord(Sample.keyRecord("key-1", state: .inFlight(request: 1), endedAt: nil)),
                ],
                [.resultsExpired(storedBefore: 150), .keyRecordsExpired(endedBefore: 65)],
            ]
            let model = MemoryJournal()
            for batch in operations {
                try journal.commit(batch)
                try model.commit(batch)
            }
            try journal.commit([])
            #expect(journal.statistics.commits == 3)
            #expect(journal.statistics.operations == UInt64(operations.map(\.count).reduce(0, +)))
            let expected = try model.recover()
            #expect(expected.requests.map(\.id) == [1, 2])
            #expect(expected.requests[0].listeners.count == 2 && expected.requests[1].handleDispatched)
            #expect(expected.results.map(\.key.requestID) == [Sample.bytes("newer"), Sample.bytes("old")])
            #expect(expected.keyRecords.map(\.key) == [Sample.bytes("key-4"), Sample.bytes("key-1")])
            #expect(expected.nextRequestID == 4)
            #expect(try journal.recover() == expected)
            journal.close()
            let reopened = try PostgresJournal(url: url, sync: .interval(.milliseconds(10)))
            #expect(try reopened.recover() == expected)
            #expect(reopened.fingerprintSeeds == seeds)
            // Ending every request keeps the next id above them.
            try reopened.commit([.ended(request: 1, results: []), .ended(request: 2, results: [])])
            #expect(try reopened.recover().nextRequestID == 4)
            reopened.close()
            expectError(.invalidOperation) { _ = try reopened.recover() }
        }

        /// The reference comparison of `ModelTests`, against PostgreSQL: random batches (some rejected as a whole)
        /// give the same outcomes and states as `MemoryJournal`, before and after reopening.
        @Test func randomBatchesGiveTheSameStateAsTheReference() throws {
            for seed in [1, 2] as [UInt64] {
                let url = try database("model\(seed)")
                var journal = try PostgresJournal(url: url, sync: seed % 2 == 0 ? .everyCommit : .interval(.seconds(1)))
                let model = MemoryJournal()
                var g = ModelTests.SeededGenerator(state: seed)
                var c = ModelTests.SeededGenerator(state: seed &+ 1_000)
                var nextID: UInt64 = 1
                var rejected = 0
                for round in 0..<200 {
                    let now = 1_000 + Int64(round)
                    let drawn = (0..<Int.random(in: 0...6, using: &g)).map { _ in
                        ModelTests.operation(&g, nextID: &nextID, now: now)
                    }
                    let batch = ModelTests.withConversations(drawn, &c, now: now)
                    var postgresError: JournalError?
                    var modelError: JournalError?
                    do { try journal.commit(batch) } catch { postgresError = error }
                    do { try model.commit(batch) } catch { modelError = error }
                    #expect(
                        postgresError?.code == modelError?.code,
                        "seed \(seed) round \(round): \(String(describing: postgresError)) \(batch)")
                    if postgresError != nil { rejected += 1 }
                    if round % 50 == 49 {
                        #expect(try journal.recover() == (try model.recover()), "seed \(seed) round \(round)")
                        journal.close()
                        journal = try PostgresJournal(url: url)
                    }
                }
                #expect(try journal.recover() == (try model.recover()))
                #expect(rejected > 3)
                let state = try model.recover()
                #expect(state.requests.count > 5 && state.results.count > 5 && state.keyRecords.count > 3)
                #expect(state.conversations.count > 2)
                journal.close()
            }
        }

        /// Random batches of up to 40 operations, mostly valid, rich in operations that meet inside one batch (accepted
        /// and ended, attached and detached, a key record written twice or written then removed, a result stored twice
        /// or stored then expired, an id ended then accepted again): the set-based commit gives the reference's outcomes
        /// and states, before and after reopening.
        @Test func largeBatchesWithOperationsThatMeetGiveTheSameStateAsTheReference() throws {
            for seed in [11, 12] as [UInt64] {
                let url = try database("meet\(seed)")
                var journal = try PostgresJournal(url: url)
                let model = MemoryJournal()
                var g = ModelTests.SeededGenerator(state: seed)
                var nextID: UInt64 = 1
                var rejected = 0
                var cut = 0
                var richest = (0, 0, 0, false)  // the most requests, results and key records seen; listeners seen
                for round in 0..<150 {
                    let now = 1_000 + Int64(round) * 10
                    let open = Set(try model.recover().requests.map(\.id))
                    let batch = Self.meetingBatch(&g, open: open, nextID: &nextID, now: now)
                    if (try? PostgresJournalBatch(batch))?.segments.count ?? 0 > 1 { cut += 1 }
                    var postgresError: JournalError?
                    var modelError: JournalError?
                    do { try journal.commit(batch) } catch { postgresError = error }
                    do { try model.commit(batch) } catch { modelError = error }
                    #expect(
                        postgresError?.code == modelError?.code,
                        "seed \(seed) round \(round): \(String(describing: postgresError)) \(batch)")
                    if modelError != nil { rejected += 1 }
                    let state = try model.recover()
                    #expect(try journal.recover() == state, "seed \(seed) round \(round): \(batch)")
                    richest = (
                        max(richest.0, state.requests.count), max(richest.1, state.results.count),
                        max(richest.2, state.keyRecords.count),
                        richest.3 || state.requests.contains { !$0.listeners.isEmpty }
                    )
                    if round % 25 == 24 {
                        journal.close()
                        journal = try PostgresJournal(url: url)
                    }
                }
                #expect(try journal.recover() == (try model.recover()))
                // Both outcomes and the cut into segments were exercised.
                #expect(rejected > 3 && rejected < 100, "\(rejected) rejected")
                #expect(cut > 3, "\(cut) batches cut")
                #expect(richest.0 > 5 && richest.1 > 5 && richest.2 > 3 && richest.3, "\(richest)")
                #expect(try model.recover().conversations.count > 2)
                journal.close()
            }
        }

        /// A batch for ``largeBatchesWithOperationsThatMeetGiveTheSameStateAsTheReference()``: ids mostly from `open`
        /// and those accepted in the batch, keys from small sets (so they meet), now and then an invalid operation.
        static func meetingBatch(
            _ g: inout ModelTests.SeededGenerator, open: Set<UInt64>, nextID: inout UInt64, now: Int64
        ) -> [JournalOperation] {
            var open = open.sorted()
            var ended: [UInt64] = []
            var batch: [JournalOperation] = []
            func bytes(_ prefix: String, _ range: ClosedRange<Int>) -> [UInt8] {
                Array("\(prefix)\(Int.random(in: range, using: &g))".utf8)
            }
            func key() -> JournalRequestKey {
                JournalRequestKey(
                    client: bytes("c", 0...1), requestID: bytes("r", 0...5), version: UInt8.random(in: 1...2, using: &g)
                )
            }
            func result() -> JournalResult {
                JournalResult(
                    key: key(), isError: Bool.random(using: &g), phase: ["handle", ""].randomElement(using: &g)!,
                    body: Int.random(in: 0...3, using: &g) == 0 ? [] : bytes("body", 0...1000),
                    storedAt: now - Int64.random(in: 0...100, using: &g))
            }
            func record() -> JournalKeyRecord {
                let state: JournalKeyRecord.State
                switch Int.random(in: 0...2, using: &g) {
                case 0: state = .inFlight(request: UInt64.random(in: 1...nextID, using: &g))
                case 1: state = .completed(isError: Bool.random(using: &g), phase: "handle", body: bytes("b", 0...9))
                default: state = .outcomeUnknown
                }
                return JournalKeyRecord(
                    identity: bytes("id", 0...1), intentType: bytes("T", 0...1), key: bytes("k", 0...5),
                    fingerprint: (0..<16).map { _ in UInt8.random(in: 0...255, using: &g) },
                    attempts: Int.random(in: 1...4, using: &g), state: state,
                    endedAt: Bool.random(using: &g) ? now - Int64.random(in: 0...100, using: &g) : nil)
            }
            func request(_ id: UInt64) -> JournalRequest {
                JournalRequest(
                    id: id, client: bytes("c", 0...1), requestID: bytes("r", 0...99), identity: bytes("id", 0...1),
                    intentType: bytes("T", 0...1), phase: "lifecycle", body: bytes("body", 0...99),
                    deadlineMilliseconds: Int.random(in: 0...10_000, using: &g), acceptedAt: now,
                    idempotencyKey: Bool.random(using: &g) ? bytes("k", 0...5) : nil,
                    attempt: Int.random(in: 1...3, using: &g), version: UInt8.random(in: 1...2, using: &g),
                    handleDispatched: Int.random(in: 0...5, using: &g) == 0,
                    listeners: Int.random(in: 0...2, using: &g) == 0 ? [key(), key()] : [])
            }
            func accept() -> UInt64 {
                let id = nextID
                nextID += 1
                batch.append(.accepted(request(id)))
                open.append(id)
                return id
            }
            func end(_ id: UInt64) {
                batch.append(.ended(request: id, results: (0..<Int.random(in: 0...2, using: &g)).map { _ in result() }))
                open.removeAll { $0 == id }
                ended.append(id)
            }
            func conversation() -> JournalConversation {
                JournalConversation(
                    scope: bytes("s", 0...1), id: bytes("v", 0...3), state: bytes("{\"turn\":", 0...9), updatedAt: now)
            }
            for _ in 0..<Int.random(in: 1...40, using: &g) {
                let someOpen = open.randomElement(using: &g)
                switch Int.random(in: 0...109, using: &g) {
                case 0..<14: _ = accept()
                case 14..<20: if let id = someOpen { batch.append(.handleDispatched(request: id)) }
                case 20..<30: if let id = someOpen { end(id) }
                case 30..<38: if let id = someOpen { batch.append(.attached(request: id, key())) }
                case 38..<43: if let id = someOpen { batch.append(.detached(request: id, key())) }
                case 43..<48:
                    // The same listener attached then detached, or detached then attached.
                    guard let id = someOpen else { continue }
                    let listener = key()
                    let pair: [JournalOperation] = [
                        .attached(request: id, listener), .detached(request: id, listener),
                        .attached(request: id, listener),
                    ]
                    let start = Int.random(in: 0...1, using: &g)
                    batch += pair[start...(start + 1)]
                case 48..<56: batch.append(.stored((0..<Int.random(in: 1...3, using: &g)).map { _ in result() }))
                case 56..<68: batch.append(.keyRecord(record()))
                case 68..<74:
                    batch.append(
                        .keyRemoved(identity: bytes("id", 0...1), intentType: bytes("T", 0...1), key: bytes("k", 0...5))
                    )
                case 74..<78: batch.append(.resultsExpired(storedBefore: now - Int64.random(in: 0...150, using: &g)))
                case 78..<82: batch.append(.keyRecordsExpired(endedBefore: now - Int64.random(in: 0...150, using: &g)))
                case 82..<86:
                    // An id ended in this batch accepted again (its commit is cut into segments), then used.
                    guard let id = ended.randomElement(using: &g) else { continue }
                    batch.append(.accepted(request(id)))
                    ended.removeAll { $0 == id }
                    open.append(id)
                    if Bool.random(using: &g) { batch.append(.handleDispatched(request: id)) }
                case 86..<92:
                    // A whole request in one batch, as a broker under load commits it.
                    let id = accept()
                    batch.append(.handleDispatched(request: id))
                    end(id)
                case 92..<94: batch.append(ModelTests.operation(&g, nextID: &nextID, now: now))  // may be invalid
                case 94..<95:
                    // Invalid: an id used after it ended in this batch, or before it is accepted.
                    if let id = ended.randomElement(using: &g) {
                        batch.append(
                            [
                                .handleDispatched(request: id), .attached(request: id, key()),
                                .ended(request: id, results: []),
                            ]
                            .randomElement(using: &g)!)
                    } else {
                        batch.append(.attached(request: nextID, key()))
                        _ = accept()
                    }
                case 100..<106: batch.append(.conversation(conversation()))
                case 106..<110:
                    // Removed, sometimes written again in the same batch (the delete runs before the upserts).
                    let written = conversation()
                    batch.append(.conversationRemoved(scope: written.scope, id: written.id))
                    if Bool.random(using: &g) { batch.append(.conversation(written)) }
                default:
                    if let id = someOpen { batch.append(.detached(request: id, key())) }
                }
            }
            return batch
        }

        /// The arrangement of a broker's batch: one segment, whatever its size; the reductions keep the net effect.
        @Test func aBrokersBatchIsOneSegment() throws {
            var operations: [JournalOperation] = []
            for id in 1...200 as ClosedRange<UInt64> {
                operations.append(.accepted(Sample.request(id)))
                operations.append(.handleDispatched(request: id))
                operations.append(
                    .keyRecord(Sample.keyRecord("key-\(id % 7)", state: .inFlight(request: id), endedAt: nil)))
                operations.append(
                    .ended(request: id, results: [Sample.result(Sample.key("c", "r\(id % 5)"), storedAt: 9)]))
            }
            let batch = try PostgresJournalBatch(operations)
            #expect(batch.segments.count == 1)
            #expect(batch.highestAccepted == 200)
            let segment = try #require(batch.segments.first)
            #expect(segment.accepted.count == 200 && segment.dispatched.count == 200 && segment.ended.count == 200)
            // Last one wins per key, in the order of the last write.
            #expect(segment.results.map(\.key.requestID) == ["r1", "r2", "r3", "r4", "r0"].map(Sample.bytes))
            #expect(segment.results.count == 5)
            #expect(segment.keyRecords.map(\.key) == (194...200).map { Sample.bytes("key-\($0 % 7)") })
            // Attached then detached leaves a delete of older rows and no insert; detached then attached, an insert.
            let key = Sample.key("c", "dup")
            let pairs = try PostgresJournalBatch([
                .attached(request: 1, key), .detached(request: 1, key), .detached(request: 2, key),
                .attached(request: 2, key),
            ])
            #expect(pairs.segments.count == 1)
            #expect(pairs.segments[0].listenerInserts == [PostgresJournalBatch.Listener(request: 2, key: key)])
            #expect(pairs.segments[0].listenerDeletes.map(\.request) == [1, 2])
            // An id ended and accepted again is cut into two segments.
            let again = try PostgresJournalBatch([
                .accepted(Sample.request(5)), .ended(request: 5, results: []), .accepted(Sample.request(5)),
            ])
            #expect(again.segments.count == 2)
            #expect(throws: PostgresJournalBatch.OutOfRange.self) {
                try PostgresJournalBatch([.accepted(Sample.request(0))])
            }
        }

        /// Parts of one combined statement take their parameters one after the other.
        @Test func combinedStatementsNumberTheirParametersInTurn() {
            #expect(
                PostgresJournalSchema.renumbered("SELECT $1, $12, '$', $2", after: 3) == ("SELECT $4, $15, '$', $5", 12)
            )
            let sql = PostgresJournalSchema.combined(["DELETE FROM a WHERE x = $1", "UPDATE b SET y = $2 WHERE z = $1"])
            #expect(
                sql == "WITH p0 AS (DELETE FROM a WHERE x = $1 RETURNING 1),\n"
                    + "p1 AS (UPDATE b SET y = $3 WHERE z = $2 RETURNING 1)\n"
                    + "SELECT (SELECT count(*) FROM p0), (SELECT count(*) FROM p1)")
        }

        /// A commit is a constant number of statements: a broker's batch for 1 request and for 200 requests cost the same
        /// round trips.
        @Test func aCommitsRoundTripsDoNotGrowWithTheBatch() throws {
            let url = try database("roundtrips")
            let store = try PostgresJournalStore(url: url, sync: .everyCommit)
            defer { store.close() }
            func batch(_ ids: ClosedRange<UInt64>) -> [JournalOperation] {
                ids.flatMap { id -> [JournalOperation] in
                    [
                        .accepted(Sample.request(id, idempotencyKey: Sample.bytes("k\(id)"))),
                        .keyRecord(Sample.keyRecord("k\(id)", state: .inFlight(request: id), endedAt: nil)),
                        .handleDispatched(request: id),
                        .keyRecord(
                            Sample.keyRecord(
                                "k\(id)", state: .completed(isError: false, phase: "handle", body: [1]), endedAt: 5)),
                        .ended(request: id, results: [Sample.result(Sample.key("client-a", "req-\(id)"), storedAt: 7)]),
                        // A conversation turn's state, written in the transaction of its request.
                        .conversation(Sample.conversation("c\(id % 3)", turn: Int(id), at: 7)),
                    ]
                }
            }
            var before = store.statements
            try store.commit(batch(1...1))
            let one = store.statements - before
            before = store.statements
            try store.commit(batch(2...201))
            let many = store.statements - before
            print("statements per commit: \(one) for 1 request, \(many) for 200 requests")
            #expect(one == many)
            #expect(many <= 5)
            let state = try store.recover()
            #expect(state.requests.isEmpty && state.results.count == 201 && state.keyRecords.count == 201)
            #expect(state.conversations.map(\.id) == ["c1", "c2", "c0"].map(Sample.bytes))
            #expect(state.nextRequestID == 202)
        }

        @Test func aRejectedBatchLeavesNothingOfItself() throws {
            let url = try database("atomic")
            let journal = try PostgresJournal(url: url)
            defer { journal.close() }
            try journal.commit([.accepted(Sample.request(1))])
            let before = try journal.recover()
            let invalidBatches: [[JournalOperation]] = [
                [.accepted(Sample.request(2)), .accepted(Sample.request(1))],  // id 1 accepted twice
                [.accepted(Sample.request(3)), .ended(request: 9, results: [])],
                [.stored([Sample.result(Sample.key("c", "r"), storedAt: 5)]), .handleDispatched(request: 9)],
                [
                    .keyRecord(Sample.keyRecord("k", state: .outcomeUnknown, endedAt: 1)),
                    .attached(request: 9, Sample.key("c", "d")),
                ],
                [.accepted(Sample.request(4)), .accepted(Sample.request(0))],  // out of range
            ]
            for batch in invalidBatches {
                let error = expectError(.invalidOperation) { try journal.commit(batch) }
                #expect(error?.message.contains("nothing of it is written") == true)
                #expect(try journal.recover() == before)
            }
            // The journal still works after the rejections.
            try journal.commit([.accepted(Sample.request(2))])
            #expect(try journal.recover().requests.map(\.id) == [1, 2])
            #expect(journal.statistics.commits == 2)
        }

        @Test func conversationsAreWrittenReplacedAndRemoved() throws {
            let url = try database("conversations")
            try ConversationChecks.writeReplaceAndRemove(try PostgresJournal(url: url)) { journal in
                journal.close()
                return try PostgresJournal(url: url)
            }
            try ConversationChecks.aFailedCommitWritesNoneOfIt(try PostgresJournal(url: try database("conversations2")))
        }

        /// A journal of schema version 1 (made here by undoing version 2's one change) is upgraded in place by the
        /// broker that takes leadership, keeping what it holds.
        @Test func aVersionOneJournalIsUpgradedByItsLeader() throws {
            let url = try database("upgrade")
            var journal = try PostgresJournal(url: url)
            try journal.commit([.accepted(Sample.request(1))])
            journal.close()
            try psql(
                database: "upgrade",
                "DROP TABLE conversations; UPDATE meta SET value = 1 WHERE key = 'schema_version'")
            journal = try PostgresJournal(url: url)
            let state = try journal.recover()
            #expect(state.requests.map(\.id) == [1] && state.conversations.isEmpty)
            let conversation = Sample.conversation("c-1", turn: 1, at: 5)
            try journal.commit([.conversation(conversation)])
            journal.close()
            // Version 2 now: a check that fails (psql exits non-zero) on any other version.
            try psql(
                database: "upgrade",
                "DO $$ BEGIN IF (SELECT value FROM meta WHERE key = 'schema_version') <> 2 THEN "
                    + "RAISE EXCEPTION 'not version 2'; END IF; END $$")
            journal = try PostgresJournal(url: url)
            #expect(try journal.recover().conversations == [conversation])
            journal.close()
        }

        @Test func schemaChecks() throws {
            let url = try database("schema")
            expectError(.exists) { try PostgresJournal.create(url: url) }
            let empty = try database("empty", create: false)
            let missing = expectError(.missing) { _ = try PostgresJournal(url: empty) }
            #expect(missing?.message.contains("concierge journal init") == true)
            try server.sql("CREATE DATABASE newer")
            let newer = "postgres://concierge@\(server.host):\(server.port)/newer"
            try PostgresJournal.create(url: newer)
            try psql(database: "newer", "UPDATE meta SET value = 3 WHERE key = 'schema_version'")
            expectError(.newerVersion) { _ = try PostgresJournal(url: newer) }
            // A failed create leaves nothing behind: the existing journal still opens.
            let journal = try PostgresJournal(url: url)
            #expect(try journal.recover() == JournalState())
            journal.close()
        }

        /// Runs SQL in another database of the test server.
        func psql(database: String, _ statement: String) throws {
            let bin = try #require(PostgresServer.binDirectory)
            let process = Process()
            process.executableURL = bin.appendingPathComponent("psql")
            process.arguments = [
                "-h", server.host, "-p", String(server.port), "-U", "concierge", "-d", database, "-v",
                "ON_ERROR_STOP=1",
                "-qc", statement,
            ]
            process.standardOutput = FileHandle.nullDevice
            try process.run()
            process.waitUntilExit()
            #expect(process.terminationStatus == 0)
        }

        @Test func oneLeaderAtATime() throws {
            let url = try database("leader")
            let first = try PostgresJournal(url: url)
            try first.commit([.accepted(Sample.request(1))])
            let locked = expectError(.locked) { _ = try PostgresJournal(url: url) }
            #expect(locked?.message.contains("another broker") == true)
            // Still the leader: its commits go on.
            try first.commit([.accepted(Sample.request(2))])
            first.close()
            let second = try PostgresJournal(url: url)
            #expect(try second.recover().requests.map(\.id) == [1, 2])
            expectError(.locked) { _ = try PostgresJournal(url: url) }
            second.close()
        }

        @Test func aJournalWhoseSessionEndedCannotWrite() throws {
            let url = try database("fence")
            let first = try PostgresJournal(url: url)
            try first.commit([.accepted(Sample.request(1))])
            server.stop()
            try server.start()
            expectError(.unavailable) { try first.commit([.accepted(Sample.request(2))]) }
            // It stays fenced (no silent reconnection), and wrote nothing.
            expectError(.unavailable) { try first.commit([.accepted(Sample.request(3))]) }
            let second = try PostgresJournal(url: url)
            #expect(try second.recover().requests.map(\.id) == [1])
            try second.commit([.accepted(Sample.request(2))])
            second.close()
            first.close()
        }

        /// The fence itself: a session that lost the lock while its connection lives (as after a reconnection) writes
        /// nothing, and another journal can take over.
        @Test func aSessionWithoutTheLockCannotWrite() throws {
            let url = try database("fenced")
            let journal = try PostgresJournal(url: url)
            defer { journal.close() }
            try journal.commit([.accepted(Sample.request(1))])
            try journal.releaseLeadershipForTesting()
            let second = try PostgresJournal(url: url)
            let error = expectError(.unavailable) { try journal.commit([.accepted(Sample.request(2))]) }
            #expect(error?.message.contains("leader lock") == true)
            #expect(try second.recover().requests.map(\.id) == [1])
            try second.commit([.accepted(Sample.request(2))])
            #expect(try second.recover().requests.map(\.id) == [1, 2])
            second.close()
        }

        @Test func aTerminatedSessionCannotWrite() throws {
            let url = try database("unlocked")
            let journal = try PostgresJournal(url: url)
            defer { journal.close() }
            try journal.commit([.accepted(Sample.request(1))])
            // Another session ends this one's backend: the lock goes with it.
            try psql(
                database: "unlocked",
                "SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND pid <> pg_backend_pid()"
            )
            expectError(.unavailable) { try journal.commit([.accepted(Sample.request(2))]) }
            let second = try PostgresJournal(url: url)
            #expect(try second.recover().requests.map(\.id) == [1])
            second.close()
        }

        @Test func anUnreachableServerIsUnavailable() throws {
            let port = server.port
            server.stop()
            let url = "postgres://concierge:secret-password@127.0.0.1:\(port)/concierge"
            let error = expectError(.unavailable) { _ = try PostgresJournal(url: url) }
            #expect(error?.message.contains("127.0.0.1:\(port)") == true)
            #expect(error?.message.contains("secret-password") == false)
            let createError = expectError(.unavailable) { try PostgresJournal.create(url: url) }
            #expect(createError?.message.contains("secret-password") == false)
            expectError(.invalidOperation) { _ = try PostgresJournal(url: "postgres:///nohost") }
        }

        /// The commit throughput against the private server, printed, never asserted: batches of 50 requests' worth of
        /// operations (50 accepted, the previous batch's 50 handle dispatches, the batch before's 50 endings with one
        /// result each). Runs when `CONCIERGE_JOURNAL_BENCH` is set (its value: the number of batches, 2,000 if not a
        /// number): `CONCIERGE_JOURNAL_BENCH=2000 swift test --skip-build --filter PostgresJournalTests.commitThroughput`.
        @Test(.enabled(if: ProcessInfo.processInfo.environment["CONCIERGE_JOURNAL_BENCH"] != nil))
        func commitThroughput() throws {
            let batches = Int(ProcessInfo.processInfo.environment["CONCIERGE_JOURNAL_BENCH"] ?? "") ?? 2_000
            let url = try database("throughput")
            // CONCIERGE_JOURNAL_BENCH_SYNC=interval measures without waiting for the WAL flush (synchronous_commit off).
            let interval = ProcessInfo.processInfo.environment["CONCIERGE_JOURNAL_BENCH_SYNC"] == "interval"
            let journal = try PostgresJournal(url: url, sync: interval ? .interval(.seconds(1)) : .everyCommit)
            defer { journal.close() }
            let perBatch = 50
            var operations = 0
            let clock = ContinuousClock()
            let start = clock.now
            for batch in 0..<(batches + 2) {
                var ops: [JournalOperation] = []
                if batch < batches {
                    for i in 0..<perBatch {
                        let id = UInt64(batch * perBatch + i + 1)
                        ops.append(.accepted(Sample.request(id, idempotencyKey: nil)))
                    }
                }
                if batch >= 1, batch - 1 < batches {
                    for i in 0..<perBatch {
                        ops.append(.handleDispatched(request: UInt64((batch - 1) * perBatch + i + 1)))
                    }
                }
                if batch >= 2 {
                    for i in 0..<perBatch {
                        let id = UInt64((batch - 2) * perBatch + i + 1)
                        let result = Sample.result(Sample.key("client-a", "req-\(id)"), storedAt: 1_700_000_000_000)
                        ops.append(.ended(request: id, results: [result]))
                    }
                }
                try journal.commit(ops)
                operations += ops.count
            }
            let elapsed = start.duration(to: clock.now).components
            let seconds = Double(elapsed.seconds) + Double(elapsed.attoseconds) / 1e18
            let commits = batches + 2
            print(
                "PostgreSQL journal (\(interval ? "synchronous_commit off" : "synchronous_commit on")): \(commits) commits, \(operations) operations in \(String(format: "%.2f", seconds)) s: "
                    + "\(Int(Double(operations) / seconds)) operations/s, \(Int(Double(commits) / seconds)) commits/s, "
                    + "\(Int(Double(batches * perBatch) / seconds)) requests/s; commit latency µs \(journal.statistics.commitLatency)"
            )
            #expect(try journal.recover().requests.isEmpty)
        }

        @Test func journalInitCreatesAPostgresJournal() throws {
            let url = try database("cli", create: false)
            let created = try JournalCommandTests().concierge("journal", "init", url)
            #expect(created.status == 0, "\(created.error)")
            #expect(created.output.contains("created"))
            let journal = try PostgresJournal(url: url)
            #expect(try journal.recover() == JournalState())
            journal.close()
            let again = try JournalCommandTests().concierge("journal", "init", url)
            #expect(again.status == 1 && again.error.contains("journal-exists"))
        }
    }
#endif  // PostgreSQL
