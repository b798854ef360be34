import CSQLite

/// The work of a ``SQLiteJournal``: its connection, prepared statements, lock, sync policy and statistics.
///
/// Not thread-safe: ``SQLiteJournal`` keeps it behind a mutex.
final class SQLiteJournalStore {
    let path: String
    let sync: JournalSync
    private var lock: JournalFileLock?
    private var connection: SQLiteConnection?
    private var statements: Statements?
    private var recorder = CommitRecorder()
    private let clock = ContinuousClock()
    private var lastSync: ContinuousClock.Instant
    private var unsynced = false
    /// What commits keep in step with the file (read at open, changed only by a commit that succeeded).
    private var counters = Counters(
        highestID: 0, storedNextID: 1, nextResultSeq: 1, resultSeqReserved: 1, requestsWithListeners: [])

    /// The statements a journal prepares once, at open.
    struct Statements {
        let begin, commit, rollback: SQLiteStatement
        let insertRequest, insertListener, deleteListener, deleteListeners, dispatch: SQLiteStatement
        let selectOpenKey, endInPlace, deleteRequest, insertResult: SQLiteStatement
        let upsertKeyRecord, deleteKeyRecord, expireEnded, expireResults, expireKeyRecords: SQLiteStatement
        let upsertConversation, deleteConversation, selectConversations: SQLiteStatement
        let advanceNextID, reserveResultSeqs: SQLiteStatement
        let selectRequests, selectListeners, selectEnded, selectResults, selectKeyRecords: SQLiteStatement
        let selectNextID, selectHighestID: SQLiteStatement

        init(_ c: SQLiteConnection) throws(JournalError) {
            begin = try c.prepare("BEGIN IMMEDIATE")
            commit = try c.prepare("COMMIT")
            rollback = try c.prepare("ROLLBACK")
            insertRequest = try c.prepare(
                """
                INSERT INTO requests(id, client, request_id, identity, intent_type, phase, body, deadline_ms,
                    accepted_at, idempotency_key, attempt, version, handle_dispatched)
                VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)
                """)
            // Only to an open request (the foreign key alone would accept an ended row).
            insertListener = try c.prepare(
                """
                INSERT INTO listeners(request, client, request_id, version, act_at)
                SELECT ?1, ?2, ?3, ?4, ?5 WHERE EXISTS (SELECT 1 FROM requests WHERE id = ?1 AND stored_at IS NULL)
                """)
            deleteListener = try c.prepare(
                "DELETE FROM listeners WHERE request = ?1 AND client = ?2 AND request_id = ?3 AND version = ?4")
            deleteListeners = try c.prepare("DELETE FROM listeners WHERE request = ?1")
            dispatch = try c.prepare("UPDATE requests SET handle_dispatched = 1 WHERE id = ?1 AND stored_at IS NULL")
            selectOpenKey = try c.prepare(
                "SELECT client, request_id, version FROM requests WHERE id = ?1 AND stored_at IS NULL")
            endInPlace = try c.prepare(
                """
                UPDATE requests SET body = ?2, result_seq = ?3, is_error = ?4, result_phase = ?5, stored_at = ?6
                WHERE id = ?1 AND stored_at IS NULL AND client = ?7 AND request_id = ?8 AND version = ?9
                """)
            deleteRequest = try c.prepare("DELETE FROM requests WHERE id = ?1 AND stored_at IS NULL")
            insertResult = try c.prepare(
                """
                INSERT INTO results(seq, client, request_id, version, is_error, phase, body, stored_at)
                VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
                """)
            upsertKeyRecord = try c.prepare(
                """
                INSERT OR REPLACE INTO key_records(identity, intent_type, key, fingerprint, attempts, state, request,
                    is_error, phase, body, ended_at)
                VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)
                """)
            deleteKeyRecord = try c.prepare(
                "DELETE FROM key_records WHERE identity = ?1 AND intent_type = ?2 AND key = ?3")
            upsertConversation = try c.prepare(
                "INSERT OR REPLACE INTO conversations(scope, id, state, updated_at) VALUES(?1, ?2, ?3, ?4)")
            deleteConversation = try c.prepare("DELETE FROM conversations WHERE scope = ?1 AND id = ?2")
            selectConversations = try c.prepare("SELECT scope, id, state, updated_at FROM conversations ORDER BY seq")
            expireEnded = try c.prepare("DELETE FROM requests WHERE stored_at < ?1")
            expireResults = try c.prepare("DELETE FROM results WHERE stored_at < ?1")
            expireKeyRecords = try c.prepare("DELETE FROM key_records WHERE ended_at < ?1")
            advanceNextID = try c.prepare("UPDATE meta SET value = ?1 WHERE key = 'next_request_id' AND value < ?1")
            reserveResultSeqs = try c.prepare(
                """
                INSERT INTO meta(key, value) VALUES('result_seq_reserved', ?1)
                ON CONFLICT(key) DO UPDATE SET value = excluded.value WHERE value < excluded.value
                """)
            selectRequests = try c.prepare(
                """
                SELECT id, client, request_id, identity, intent_type, phase, body, deadline_ms, accepted_at,
                    idempotency_key, attempt, version, handle_dispatched
                FROM requests WHERE stored_at IS NULL ORDER BY id
                """)
            selectListeners = try c.prepare(
                "SELECT request, client, request_id, version, act_at FROM listeners ORDER BY seq")
            selectEnded = try c.prepare(
                """
                SELECT result_seq, client, request_id, version, is_error, result_phase, body, stored_at
                FROM requests WHERE stored_at IS NOT NULL
                """)
            selectResults = try c.prepare(
                "SELECT seq, client, request_id, version, is_error, phase, body, stored_at FROM results")
            selectKeyRecords = try c.prepare(
                """
                SELECT identity, intent_type, key, fingerprint, attempts, state, request, is_error, phase, body,
                    ended_at
                FROM key_records ORDER BY seq
                """)
            selectNextID = try c.prepare("SELECT value FROM meta WHERE key = 'next_request_id'")
            selectHighestID = try c.prepare("SELECT coalesce(max(id), 0) FROM requests")
        }
    }

    /// Key record states as stored.
    private enum StoredState: Int64 {
        case inFlight = 0
        case completed = 1
        case outcomeUnknown = 2
    }

    init(path: String, sync: JournalSync) throws(JournalError) {
        self.path = path
        self.sync = sync
        lastSync = clock.now
        try SQLiteJournalSchema.checkFile(path)
        let lock = try JournalFileLock(journalPath: path)
        let connection = try SQLiteConnection(path: path, flags: SQLITE_OPEN_READWRITE)
        // Another process (a `sqlite3` shell, a backup) may hold a lock for a moment; a broker never waits long.
        sqlite3_busy_timeout(connection.handle, 1000)
        let version = try SQLiteJournalSchema.validate(connection)
        let mode = try connection.texts("PRAGMA journal_mode = WAL")
        guard mode == ["wal"] else {
            throw JournalError(code: .io, message: "\(path): cannot switch to WAL mode (SQLite answered \(mode)).")
        }
        switch sync {
        case .everyCommit: try connection.execute("PRAGMA synchronous = FULL")
        case .interval: try connection.execute("PRAGMA synchronous = NORMAL")
        }
        // A journal of an older version is upgraded under the lock, before any statement of this version is
        // prepared against it.
        try SQLiteJournalSchema.migrate(connection, from: version)
        try connection.execute("PRAGMA foreign_keys = ON; PRAGMA journal_size_limit = 67108864")
        statements = try Statements(connection)
        let reserved = max(1, try connection.integer("SELECT value FROM meta WHERE key = 'result_seq_reserved'"))
        counters = Counters(
            highestID: UInt64(max(0, try connection.integer("SELECT coalesce(max(id), 0) FROM requests"))),
            storedNextID: UInt64(
                max(1, try connection.integer("SELECT value FROM meta WHERE key = 'next_request_id'"))),
            nextResultSeq: reserved, resultSeqReserved: reserved,
            requestsWithListeners: Set(
                try connection.texts("SELECT DISTINCT request FROM listeners").compactMap { UInt64($0) }))
        let seeds = try connection.texts(
            "SELECT value FROM meta WHERE key IN ('fingerprint_seed_1', 'fingerprint_seed_2') ORDER BY key")
        fingerprintSeeds = seeds.compactMap { Int64($0).map { UInt64(bitPattern: $0) } }
        self.lock = lock
        self.connection = connection
    }

    /// The journal's secret keys for body fingerprints (two, written at creation).
    private(set) var fingerprintSeeds: [UInt64] = []

    deinit { close() }

    private func open() throws(JournalError) -> (SQLiteConnection, Statements) {
        guard let connection, let statements else {
            throw JournalError(code: .invalidOperation, message: "\(path): the journal is closed.")
        }
        return (connection, statements)
    }

    // MARK: Recovery

    func recover() throws(JournalError) -> JournalState {
        let (connection, s) = try open()
        try s.begin.run()
        do throws(JournalError) {
            let state = try read(s)
            try s.commit.run()
            return state
        } catch {
            if connection.inTransaction { try? s.rollback.run() }
            throw error
        }
    }

    private func read(_ s: Statements) throws(JournalError) -> JournalState {
        // A read that failed midway left its statement on a row: start every query from its first row.
        for query in [
            s.selectRequests, s.selectListeners, s.selectEnded, s.selectResults, s.selectKeyRecords,
            s.selectConversations, s.selectNextID, s.selectHighestID,
        ] {
            query.reset()
        }
        var state = JournalState()
        var index: [UInt64: Int] = [:]
        while try s.selectRequests.step() {
            let q = s.selectRequests
            let id = UInt64(bitPattern: q.int64(0))
            index[id] = state.requests.count
            state.requests.append(
                JournalRequest(
                    id: id, client: q.blob(1), requestID: q.blob(2), identity: q.blob(3), intentType: q.blob(4),
                    phase: q.text(5), body: q.blob(6), deadlineMilliseconds: Int(q.int64(7)), acceptedAt: q.int64(8),
                    idempotencyKey: q.optionalBlob(9), attempt: Int(q.int64(10)), version: try version(q.int64(11)),
                    handleDispatched: q.int64(12) != 0))
        }
        while try s.selectListeners.step() {
            let q = s.selectListeners
            guard let at = index[UInt64(bitPattern: q.int64(0))] else { continue }  // the foreign key forbids it
            let actAt = q.int64(4)
            state.requests[at].listeners.append(
                JournalRequestKey(
                    client: q.blob(1), requestID: q.blob(2), version: try version(q.int64(3)),
                    actAt: actAt == 0 ? nil : actAt))
        }
        state.results = try readResults(s)
        while try s.selectKeyRecords.step() {
            let q = s.selectKeyRecords
            let recordState: JournalKeyRecord.State
            switch StoredState(rawValue: q.int64(5)) {
            case .inFlight: recordState = .inFlight(request: UInt64(bitPattern: q.int64(6)))
            case .completed: recordState = .completed(isError: q.int64(7) != 0, phase: q.text(8), body: q.blob(9))
            case .outcomeUnknown: recordState = .outcomeUnknown
            case nil:
                s.selectKeyRecords.reset()
                throw JournalError(
                    code: .corrupt, message: "\(path): a key record has state \(q.int64(5)), which no Concierge writes."
                )
            }
            state.keyRecords.append(
                JournalKeyRecord(
                    identity: q.blob(0), intentType: q.blob(1), key: q.blob(2), fingerprint: q.blob(3),
                    attempts: Int(q.int64(4)), state: recordState, endedAt: q.isNull(10) ? nil : q.int64(10)))
        }
        while try s.selectConversations.step() {
            let q = s.selectConversations
            state.conversations.append(
                JournalConversation(scope: q.blob(0), id: q.blob(1), state: q.blob(2), updatedAt: q.int64(3)))
        }
        var next: UInt64 = 1
        if try s.selectNextID.step() {
            next = max(next, UInt64(bitPattern: s.selectNextID.int64(0)))
            s.selectNextID.reset()
        }
        // Ended requests keep their row (and id) until their result expires.
        if try s.selectHighestID.step() {
            next = max(next, UInt64(bitPattern: s.selectHighestID.int64(0)) + 1)
            s.selectHighestID.reset()
        }
        state.nextRequestID = next
        return state
    }

    /// The results of ended requests and of the `results` table, in the order they were written, the last one
    /// written for each key only.
    private func readResults(_ s: Statements) throws(JournalError) -> [JournalResult] {
        var numbered: [(seq: Int64, result: JournalResult)] = []
        for query in [s.selectEnded, s.selectResults] {
            while try query.step() {
                let key = JournalRequestKey(
                    client: query.blob(1), requestID: query.blob(2), version: try version(query.int64(3)))
                numbered.append(
                    (
                        query.int64(0),
                        JournalResult(
                            key: key, isError: query.int64(4) != 0, phase: query.text(5), body: query.blob(6),
                            storedAt: query.int64(7))
                    ))
            }
        }
        numbered.sort { $0.seq < $1.seq }
        var last: [JournalRequestKey: Int] = [:]
        for (offset, entry) in numbered.enumerated() { last[entry.result.key] = offset }
        var results: [JournalResult] = []
        results.reserveCapacity(last.count)
        for (offset, entry) in numbered.enumerated() where last[entry.result.key] == offset {
            results.append(entry.result)
        }
        return results
    }

    private func version(_ value: Int64) throws(JournalError) -> UInt8 {
        guard let version = UInt8(exactly: value) else {
            throw JournalError(code: .corrupt, message: "\(path): a protocol version of \(value) is stored.")
        }
        return version
    }

    // MARK: Commit

    /// Request ids and result numbers as committed.
    private struct Counters {
        /// The highest request id accepted (0 for none): through this store, or found at open.
        var highestID: UInt64
        /// `meta.next_request_id`: every id below it is recorded as used.
        var storedNextID: UInt64
        /// The number of the next result written.
        var nextResultSeq: Int64
        /// `meta.result_seq_reserved`: above every result number used.
        var resultSeqReserved: Int64
        /// The open requests that may have listeners (rows in `listeners`).
        var requestsWithListeners: Set<UInt64>
        /// Whether this commit removed a request row whose id `next_request_id` does not cover.
        var removedUncoveredID = false
    }

    func commit(_ operations: [JournalOperation]) throws(JournalError) {
        guard !operations.isEmpty else { return }
        let (connection, s) = try open()
        let start = clock.now
        try s.begin.run()
        var counters = self.counters
        do throws(JournalError) {
            var index = operations.startIndex
            while index < operations.endIndex {
                // A request accepted and dispatched at once (a handle phase) is inserted dispatched.
                if case .accepted(var request) = operations[index], index + 1 < operations.endIndex,
                    case .handleDispatched(let id) = operations[index + 1], id == request.id
                {
                    request.handleDispatched = true
                    try apply(.accepted(request), s, connection, &counters)
                    index += 2
                } else {
                    try apply(operations[index], s, connection, &counters)
                    index += 1
                }
            }
            // `next_request_id` only has to cover the ids no row keeps: written when a commit removes a row whose
            // id it does not cover, it jumps past every id accepted so far (so most commits do not write it).
            if counters.removedUncoveredID {
                counters.storedNextID = counters.highestID + 1
                try s.advanceNextID.bind(1, Int64(counters.storedNextID))
                try s.advanceNextID.run()
            }
            if counters.nextResultSeq > counters.resultSeqReserved {
                counters.resultSeqReserved = counters.nextResultSeq + 1_000_000
                try s.reserveResultSeqs.bind(1, counters.resultSeqReserved)
                try s.reserveResultSeqs.run()
            }
            try s.commit.run()
        } catch {
            // After some I/O errors SQLite has rolled back already.
            if connection.inTransaction { try? s.rollback.run() }
            throw error
        }
        counters.removedUncoveredID = false
        self.counters = counters
        let elapsed = start.duration(to: clock.now).components
        recorder.recordCommit(
            operations: operations.count,
            nanoseconds: UInt64(elapsed.seconds) * 1_000_000_000 + UInt64(elapsed.attoseconds / 1_000_000_000))
        unsynced = true
        try syncIfDue()
    }

    private func apply(
        _ operation: JournalOperation, _ s: Statements, _ connection: SQLiteConnection, _ counters: inout Counters
    ) throws(JournalError) {
        switch operation {
        case .accepted(let request):
            guard request.id >= 1, request.id < UInt64(Int64.max) else {
                throw invalid("request id \(request.id) is out of range (1 up to 2^63 - 2)")
            }
            let q = s.insertRequest
            try q.bind(1, Int64(request.id))
            try q.bind(2, request.client)
            try q.bind(3, request.requestID)
            try q.bind(4, request.identity)
            try q.bind(5, request.intentType)
            try q.bind(6, request.phase)
            try q.bind(7, request.body)
            try q.bind(8, request.deadlineMilliseconds)
            try q.bind(9, request.acceptedAt)
            try q.bind(10, request.idempotencyKey)
            try q.bind(11, request.attempt)
            try q.bind(12, Int(request.version))
            try q.bind(13, request.handleDispatched)
            try q.run()
            for listener in request.listeners { try insertListener(request.id, listener, s, connection, &counters) }
            counters.highestID = max(counters.highestID, request.id)
        case .attached(let request, let key):
            try insertListener(request, key, s, connection, &counters)
        case .detached(let request, let key):
            try s.deleteListener.bind(1, Int64(bitPattern: request))
            try s.deleteListener.bind(2, key.client)
            try s.deleteListener.bind(3, key.requestID)
            try s.deleteListener.bind(4, Int(key.version))
            try s.deleteListener.run()
        case .handleDispatched(let request):
            try s.dispatch.bind(1, Int64(bitPattern: request))
            try s.dispatch.run()
            guard connection.changes == 1 else { throw invalid("handle dispatched for request \(request), not open") }
        case .ended(let request, let results):
            try end(request, results, s, connection, &counters)
        case .stored(let results):
            for result in results { try store(result, s, &counters) }
        case .keyRecord(let record):
            let q = s.upsertKeyRecord
            try q.bind(1, record.identity)
            try q.bind(2, record.intentType)
            try q.bind(3, record.key)
            try q.bind(4, record.fingerprint)
            try q.bind(5, record.attempts)
            switch record.state {
            case .inFlight(let request):
                try q.bind(6, StoredState.inFlight.rawValue)
                try q.bind(7, Int64(bitPattern: request))
                try q.bindNull(8)
                try q.bindNull(9)
                try q.bindNull(10)
            case .completed(let isError, let phase, let body):
                try q.bind(6, StoredState.completed.rawValue)
                try q.bindNull(7)
                try q.bind(8, isError)
                try q.bind(9, phase)
                try q.bind(10, body)
            case .outcomeUnknown:
                try q.bind(6, StoredState.outcomeUnknown.rawValue)
                for index: Int32 in 7...10 { try q.bindNull(index) }
            }
            if let endedAt = record.endedAt { try q.bind(11, endedAt) } else { try q.bindNull(11) }
            try q.run()
        case .keyRemoved(let identity, let intentType, let key):
            try s.deleteKeyRecord.bind(1, identity)
            try s.deleteKeyRecord.bind(2, intentType)
            try s.deleteKeyRecord.bind(3, key)
            try s.deleteKeyRecord.run()
        case .resultsExpired(let storedBefore):
            try s.expireEnded.bind(1, storedBefore)
            try s.expireEnded.run()
            if connection.changes > 0 { counters.removedUncoveredID = true }
            try s.expireResults.bind(1, storedBefore)
            try s.expireResults.run()
        case .keyRecordsExpired(let endedBefore):
            try s.expireKeyRecords.bind(1, endedBefore)
            try s.expireKeyRecords.run()
        case .conversation(let conversation):
            let q = s.upsertConversation
            try q.bind(1, conversation.scope)
            try q.bind(2, conversation.id)
            try q.bind(3, conversation.state)
            try q.bind(4, conversation.updatedAt)
            try q.run()
        case .conversationRemoved(let scope, let id):
            try s.deleteConversation.bind(1, scope)
            try s.deleteConversation.bind(2, id)
            try s.deleteConversation.run()
        }
    }

    /// Ends an open request: its result for its own key is written over its row, the other results go to
    /// `results`; without a result for its own key, its row is removed. Its listeners are removed.
    private func end(
        _ request: UInt64, _ results: [JournalResult], _ s: Statements, _ connection: SQLiteConnection,
        _ counters: inout Counters
    ) throws(JournalError) {
        let id = Int64(bitPattern: request)
        // The broker names the request's own key first: that result is tried over the row at once.
        let own: Int?
        if let first = results.first, try writeOver(id, first, s, connection, &counters) {
            own = 0
        } else {
            try s.selectOpenKey.bind(1, id)
            guard try s.selectOpenKey.step() else { throw invalid("request \(request) ended but is not open") }
            let key = JournalRequestKey(
                client: s.selectOpenKey.blob(0), requestID: s.selectOpenKey.blob(1),
                version: UInt8(truncatingIfNeeded: s.selectOpenKey.int64(2)))
            s.selectOpenKey.reset()
            own = results.lastIndex { $0.key == key }
            if own == nil {
                try s.deleteRequest.bind(1, id)
                try s.deleteRequest.run()
                if request >= counters.storedNextID { counters.removedUncoveredID = true }
            }
        }
        if counters.requestsWithListeners.remove(request) != nil {
            try s.deleteListeners.bind(1, id)
            try s.deleteListeners.run()
        }
        // The results of one ending are numbered in their order.
        for (offset, result) in results.enumerated() where offset > 0 || own != 0 {
            if offset == own {
                guard try writeOver(id, result, s, connection, &counters) else {
                    throw invalid("request \(request) ended but is not open")
                }
            } else {
                try store(result, s, &counters)
            }
        }
    }

    /// Writes `result` over the open request `id` if it answers that request's own key; returns whether it did.
    private func writeOver(
        _ id: Int64, _ result: JournalResult, _ s: Statements, _ connection: SQLiteConnection,
        _ counters: inout Counters
    ) throws(JournalError) -> Bool {
        let q = s.endInPlace
        try q.bind(1, id)
        try q.bind(2, result.body)
        try q.bind(3, counters.nextResultSeq)
        try q.bind(4, result.isError)
        try q.bind(5, result.phase)
        try q.bind(6, result.storedAt)
        try q.bind(7, result.key.client)
        try q.bind(8, result.key.requestID)
        try q.bind(9, Int(result.key.version))
        try q.run()
        guard connection.changes == 1 else { return false }
        counters.nextResultSeq += 1
        return true
    }

    private func insertListener(
        _ request: UInt64, _ key: JournalRequestKey, _ s: Statements, _ connection: SQLiteConnection,
        _ counters: inout Counters
    ) throws(JournalError) {
        try s.insertListener.bind(1, Int64(bitPattern: request))
        try s.insertListener.bind(2, key.client)
        try s.insertListener.bind(3, key.requestID)
        try s.insertListener.bind(4, Int(key.version))
        try s.insertListener.bind(5, key.actAt ?? 0)
        try s.insertListener.run()
        guard connection.changes == 1 else { throw invalid("a duplicate attached to request \(request), not open") }
        counters.requestsWithListeners.insert(request)
    }

    private func store(_ result: JournalResult, _ s: Statements, _ counters: inout Counters) throws(JournalError) {
        let q = s.insertResult
        try q.bind(1, counters.nextResultSeq)
        counters.nextResultSeq += 1
        try q.bind(2, result.key.client)
        try q.bind(3, result.key.requestID)
        try q.bind(4, Int(result.key.version))
        try q.bind(5, result.isError)
        try q.bind(6, result.phase)
        try q.bind(7, result.body)
        try q.bind(8, result.storedAt)
        try q.run()
    }

    private func invalid(_ what: String) -> JournalError {
        JournalError(
            code: .invalidOperation, message: "\(path): \(what). The commit was rolled back: nothing of it is written.")
    }

    // MARK: Sync and close

    func syncIfDue() throws(JournalError) {
        guard case .interval(let interval) = sync, unsynced, lastSync.duration(to: clock.now) >= interval else {
            return
        }
        try checkpoint()
    }

    /// A passive WAL checkpoint: with `synchronous=NORMAL`, SQLite syncs the WAL before it copies pages into the
    /// database, and the database after.
    private func checkpoint() throws(JournalError) {
        let (connection, _) = try open()
        var logFrames: Int32 = 0
        var checkpointed: Int32 = 0
        let rc = sqlite3_wal_checkpoint_v2(connection.handle, nil, SQLITE_CHECKPOINT_PASSIVE, &logFrames, &checkpointed)
        guard rc == SQLITE_OK || rc & 0xFF == SQLITE_BUSY else { throw connection.error(rc, "checkpointing") }
        lastSync = clock.now
        unsynced = false
        recorder.recordSync()
    }

    func close() {
        guard connection != nil else { return }
        if case .interval = sync, unsynced { try? checkpoint() }
        statements = nil
        connection?.close()
        connection = nil
        lock?.release()
        lock = nil
    }

    var statistics: JournalStatistics { recorder.statistics }
}
