import CSQLite
import Foundation
import IntentJournal
import Testing

/// The rules of conversation records, checked on any journal: a write inserts, or replaces the record with the same
/// scope and id (which then comes last in recovery's order); a removal removes it, and does nothing when there is
/// none; a commit that throws writes none of its operations.
enum ConversationChecks {
    /// Writes, replaces and removes conversations on `journal` (empty), checking what recovery reads after each step
    /// and after `reopen` (which closes a journal and opens the same one again). Closes the journal it ends with.
    static func writeReplaceAndRemove(
        _ first: any Journal, reopen: (any Journal) throws -> any Journal,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        var journal = first
        func expectRecovered(_ expected: [JournalConversation], _ step: String) throws {
            #expect(try journal.recover().conversations == expected, "\(step)", sourceLocation: sourceLocation)
            journal = try reopen(journal)
            #expect(
                try journal.recover().conversations == expected, "\(step), reopened", sourceLocation: sourceLocation)
        }
        let first = Sample.conversation("c-1", turn: 1, at: 100)
        let second = Sample.conversation("c-2", turn: 1, at: 110)
        // The same id in another scope is another client's conversation.
        let otherScope = Sample.conversation("c-1", scope: "client-b", turn: 1, at: 120)
        try journal.commit([.conversation(first), .conversation(second), .conversation(otherScope)])
        try expectRecovered([first, second, otherScope], "inserted")

        let replaced = Sample.conversation("c-1", turn: 2, at: 200)
        try journal.commit([.conversation(replaced)])
        try expectRecovered([second, otherScope, replaced], "replaced: one record, now last")

        try journal.commit([.conversationRemoved(scope: second.scope, id: second.id)])
        try expectRecovered([otherScope, replaced], "removed")

        // Removing what is not there: an unknown id, and a known id in a scope that has no such conversation.
        let before = try journal.recover()
        try journal.commit([
            .conversationRemoved(scope: replaced.scope, id: Sample.bytes("c-9")),
            .conversationRemoved(scope: Sample.bytes("client-z"), id: replaced.id),
        ])
        #expect(try journal.recover() == before, "removing a missing one", sourceLocation: sourceLocation)

        // In one commit: written then removed leaves nothing; removed then written leaves the last write, last.
        let passing = Sample.conversation("c-3", turn: 1, at: 300)
        let rewritten = Sample.conversation("c-1", turn: 3, at: 310)
        try journal.commit([
            .conversation(passing), .conversation(replaced), .conversationRemoved(scope: passing.scope, id: passing.id),
            .conversationRemoved(scope: replaced.scope, id: replaced.id), .conversation(rewritten),
        ])
        try expectRecovered([otherScope, rewritten], "written and removed in one commit")
        // Requests, results and key records are untouched by conversations.
        let state = try journal.recover()
        #expect(
            state.requests.isEmpty && state.results.isEmpty && state.keyRecords.isEmpty,
            sourceLocation: sourceLocation)
        journal.close()
    }

    /// A commit that throws (an operation of it contradicts the journal) writes none of its conversation operations;
    /// the journal stays usable. Closes `journal`.
    static func aFailedCommitWritesNoneOfIt(_ journal: any Journal, sourceLocation: SourceLocation = #_sourceLocation)
        throws
    {
        let kept = Sample.conversation("c-1", turn: 1, at: 100)
        try journal.commit([.accepted(Sample.request(1)), .conversation(kept)])
        let before = try journal.recover()
        let fresh = Sample.conversation("c-2", turn: 1, at: 200)
        let replacement = Sample.conversation("c-1", turn: 2, at: 200)
        let bad: [[JournalOperation]] = [
            // A request id accepted twice.
            [.conversation(fresh), .conversationRemoved(scope: kept.scope, id: kept.id), .accepted(Sample.request(1))],
            // An ending for a request that is not open.
            [.conversation(replacement), .conversation(fresh), .ended(request: 99, results: [])],
            // A handle dispatched for a request that is not open, before the conversation operations.
            [
                .handleDispatched(request: 98), .conversation(fresh),
                .conversationRemoved(scope: kept.scope, id: kept.id),
            ],
        ]
        for batch in bad {
            let error = #expect(throws: JournalError.self, sourceLocation: sourceLocation) {
                try journal.commit(batch)
            }
            #expect(error?.code == .invalidOperation, sourceLocation: sourceLocation)
            #expect(try journal.recover() == before, "\(batch)", sourceLocation: sourceLocation)
        }
        try journal.commit([.conversation(fresh)])
        #expect(try journal.recover().conversations == [kept, fresh], sourceLocation: sourceLocation)
        journal.close()
    }
}

/// Conversation records in the memory and SQLite journals, and the upgrade of a SQLite journal of schema version 1.
@Suite struct ConversationJournalTests {
    let directory: TemporaryDirectory

    init() throws { directory = try TemporaryDirectory() }

    @Test func memoryJournalWritesReplacesAndRemoves() throws {
        try ConversationChecks.writeReplaceAndRemove(MemoryJournal()) { journal in
            let state = try journal.recover()
            journal.close()
            return MemoryJournal(state)
        }
    }

    @Test func sqliteJournalWritesReplacesAndRemoves() throws {
        let path = try directory.journal()
        try ConversationChecks.writeReplaceAndRemove(try SQLiteJournal(path: path)) { journal in
            journal.close()
            return try SQLiteJournal(path: path)
        }
        #expect(try SQLiteJournal.check(path: path).conversations == 2)
    }

    @Test func memoryJournalFailedCommitWritesNoConversation() throws {
        try ConversationChecks.aFailedCommitWritesNoneOfIt(MemoryJournal())
    }

    @Test func sqliteJournalFailedCommitWritesNoConversation() throws {
        let path = try directory.journal()
        try ConversationChecks.aFailedCommitWritesNoneOfIt(try SQLiteJournal(path: path))
        #expect(
            try SQLiteJournal.recovered(path).conversations.map(\.id) == [Sample.bytes("c-1"), Sample.bytes("c-2")])
    }

    @Test func aNewJournalIsVersionTwo() throws {
        let path = try directory.journal()
        #expect(try userVersion(path) == 2)
        #expect(try SQLiteJournal.check(path: path).schemaVersion == 2)
    }

    /// A journal made by a Concierge of schema version 1 (the DDL below is a copy of that version's, kept as it
    /// was): `check` and `backup` read it as it is; a broker's open upgrades it in place, keeping what it holds.
    @Test func aVersionOneJournalIsUpgradedInPlaceWhenABrokerOpensIt() throws {
        let path = directory.file("version-1.sqlite")
        try withDatabase(path, create: true) { db in
            try exec(db, Self.versionOneSchema)
            try exec(db, "PRAGMA journal_mode = WAL")
            try exec(
                db,
                """
                INSERT INTO requests(id, client, request_id, identity, intent_type, phase, body, deadline_ms,
                    accepted_at, idempotency_key, attempt, version, handle_dispatched)
                VALUES(7, x'63', x'7237', x'', x'54', 'lifecycle', x'7b7d', 5000, 1000, x'6b', 1, 2, 0);
                INSERT INTO key_records(identity, intent_type, key, fingerprint, attempts, state, request)
                VALUES(x'', x'54', x'6b', zeroblob(16), 1, 0, 7);
                UPDATE meta SET value = 8 WHERE key = 'next_request_id';
                """)
        }
        #expect(try userVersion(path) == 1)
        var summary = try SQLiteJournal.check(path: path)
        #expect(summary.schemaVersion == 1 && summary.conversations == 0 && summary.openRequests == 1)
        let copy = directory.file("version-1-copy.sqlite")
        try SQLiteJournal.backup(path: path, to: copy)
        #expect(try userVersion(copy) == 1)

        let journal = try SQLiteJournal(path: path)
        let state = try journal.recover()
        #expect(state.requests.map(\.id) == [7] && state.requests.first?.idempotencyKey == Sample.bytes("k"))
        #expect(state.keyRecords.map(\.state) == [.inFlight(request: 7)])
        #expect(state.conversations.isEmpty)
        #expect(state.nextRequestID == 8)
        #expect(try userVersion(path) == 2)
        let conversation = Sample.conversation("c-1", turn: 1, at: 2000)
        try journal.commit([.conversation(conversation), .ended(request: 7, results: [])])
        journal.close()

        let after = try SQLiteJournal.recovered(path)
        #expect(after.conversations == [conversation] && after.requests.isEmpty && after.nextRequestID == 8)
        summary = try SQLiteJournal.check(path: path)
        #expect(summary.schemaVersion == 2 && summary.conversations == 1)
        // Opening again finds version 2: nothing to upgrade, nothing lost.
        #expect(try SQLiteJournal.recovered(path).conversations == [conversation])
        // The backup made before the upgrade upgrades when it is opened, as the original did.
        #expect(try SQLiteJournal.recovered(copy).requests.map(\.id) == [7])
        #expect(try userVersion(copy) == 2)
    }

    /// A journal with a schema version below 1 was written by no Concierge: refused as damaged, never upgraded.
    @Test func aVersionBelowOneIsCorrupt() throws {
        let path = try directory.journal()
        try withDatabase(path) { try exec($0, "PRAGMA user_version = 0") }
        let error = #expect(throws: JournalError.self) { try SQLiteJournal(path: path) }
        #expect(error?.code == .corrupt)
        #expect(try userVersion(path) == 0)
    }

    /// The schema of version 1 as `concierge journal init` wrote it (a copy: it must not follow later changes).
    static let versionOneSchema = """
        BEGIN;
        CREATE TABLE meta(key TEXT PRIMARY KEY, value INTEGER NOT NULL) STRICT, WITHOUT ROWID;
        INSERT INTO meta(key, value) VALUES('next_request_id', 1), ('result_seq_reserved', 1);
        INSERT INTO meta(key, value) VALUES('fingerprint_seed_1', random()), ('fingerprint_seed_2', random());
        CREATE TABLE requests(
            id INTEGER PRIMARY KEY,
            client BLOB NOT NULL, request_id BLOB NOT NULL, identity BLOB NOT NULL, intent_type BLOB NOT NULL,
            phase TEXT NOT NULL, body BLOB NOT NULL, deadline_ms INTEGER NOT NULL, accepted_at INTEGER NOT NULL,
            idempotency_key BLOB, attempt INTEGER NOT NULL, version INTEGER NOT NULL,
            handle_dispatched INTEGER NOT NULL DEFAULT 0,
            result_seq INTEGER, is_error INTEGER, result_phase TEXT, stored_at INTEGER,
            CHECK((stored_at IS NULL) = (result_seq IS NULL))
        ) STRICT;
        CREATE INDEX requests_ended ON requests(stored_at) WHERE stored_at IS NOT NULL;
        CREATE TABLE listeners(
            seq INTEGER PRIMARY KEY,
            request INTEGER NOT NULL REFERENCES requests(id) ON DELETE CASCADE,
            client BLOB NOT NULL, request_id BLOB NOT NULL, version INTEGER NOT NULL,
            act_at INTEGER NOT NULL DEFAULT 0
        ) STRICT;
        CREATE INDEX listeners_by_request ON listeners(request);
        CREATE TABLE results(
            seq INTEGER PRIMARY KEY,
            client BLOB NOT NULL, request_id BLOB NOT NULL, version INTEGER NOT NULL,
            is_error INTEGER NOT NULL, phase TEXT NOT NULL, body BLOB NOT NULL, stored_at INTEGER NOT NULL
        ) STRICT;
        CREATE INDEX results_by_time ON results(stored_at);
        CREATE TABLE key_records(
            seq INTEGER PRIMARY KEY,
            identity BLOB NOT NULL, intent_type BLOB NOT NULL, key BLOB NOT NULL, fingerprint BLOB NOT NULL,
            attempts INTEGER NOT NULL, state INTEGER NOT NULL, request INTEGER, is_error INTEGER, phase TEXT,
            body BLOB, ended_at INTEGER,
            UNIQUE(identity, intent_type, key)
        ) STRICT;
        CREATE INDEX key_records_by_end ON key_records(ended_at);
        PRAGMA application_id = 1131376227;
        PRAGMA user_version = 1;
        COMMIT;
        """

    /// `PRAGMA user_version` of the file at `path`, read through a connection of its own.
    func userVersion(_ path: String) throws -> Int64 {
        var version: Int64 = -1
        try withDatabase(path) { db in
            var statement: OpaquePointer?
            try #require(sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &statement, nil) == SQLITE_OK)
            defer { sqlite3_finalize(statement) }
            try #require(sqlite3_step(statement) == SQLITE_ROW)
            version = sqlite3_column_int64(statement, 0)
        }
        return version
    }

    func withDatabase(_ path: String, create: Bool = false, _ body: (OpaquePointer) throws -> Void) throws {
        var db: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0)
        try #require(sqlite3_open_v2(path, &db, flags, nil) == SQLITE_OK)
        let handle = try #require(db)
        defer { sqlite3_close(handle) }
        try body(handle)
    }

    func exec(_ db: OpaquePointer, _ sql: String) throws {
        try #require(sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK, "\(String(cString: sqlite3_errmsg(db)))")
    }
}
