#if PostgreSQL
    import Foundation
    import Logging
    import PostgresNIO

    /// The work of a ``PostgresJournal``: its connection (holding the leader lock), sync policy and statistics.
    ///
    /// Not thread-safe: ``PostgresJournal`` keeps it behind a mutex. Every call blocks the calling thread until
    /// PostgreSQL answers: the queries run on a SwiftNIO event loop (`MultiThreadedEventLoopGroup.singleton`) and the
    /// caller waits for their `EventLoopFuture` (`wait()`), so the journal must never be called from an event loop
    /// thread. It does not use Swift concurrency, so a caller on a thread of the cooperative pool (a test) blocks only
    /// itself.
    final class PostgresJournalStore {
        /// The URL without its password, for messages.
        let name: String
        let sync: JournalSync
        private var connection: PostgresConnection?
        private var lost = false
        private var recorder = CommitRecorder()
        /// How many statements this store sent (each one round trip), for tests.
        private(set) var statements = 0
        private let clock = ContinuousClock()
        private let logger = Logger(label: "concierge.journal.postgres", factory: { _ in SwiftLogNoOpLogHandler() })

        /// The journal's secret keys for body fingerprints (two, written at creation).
        private(set) var fingerprintSeeds: [UInt64] = []

        /// Key record states as stored (as in the SQLite journal).
        private enum StoredState: Int16 {
            case inFlight = 0
            case completed = 1
            case outcomeUnknown = 2
        }

        init(url: String, sync: JournalSync, standingBy: (@Sendable () -> Bool)? = nil) throws(JournalError) {
            self.sync = sync
            let configuration = try Self.configuration(url)
            name = configuration.name
            connection = try Self.connect(configuration)
            do throws(JournalError) {
                // Short TCP keepalives on the server's side of this session: if this broker's host dies or is cut off,
                // PostgreSQL ends the session (and so releases the leader lock to a standby) within about 3 seconds
                // instead of the operating system's default of over two hours.
                for setting in Self.sessionLiveness { try query(setting) }
                let version = try checkSchema()
                while true {
                    let locked = try query(
                        "SELECT pg_try_advisory_lock($1)", binds { $0.append(PostgresJournalSchema.leaderLockKey) })
                    if try locked.rows.first?.cells(Bool.self, name) == true { break }
                    // A standby keeps asking on the same session, every 250 ms, for as long as its caller wants.
                    guard let standingBy, standingBy() else {
                        throw JournalError(
                            code: .locked,
                            message: "\(name): another broker holds this journal (PostgreSQL advisory lock "
                                + "\(PostgresJournalSchema.leaderLockKey) is taken by another session). Two brokers never "
                                + "write one journal: stop the other broker, or run this one as its standby (--standby)."
                        )
                    }
                    var pause = timespec(tv_sec: 0, tv_nsec: 250_000_000)
                    var left = timespec()
                    while nanosleep(&pause, &left) == -1 && errno == EINTR { pause = left }
                }
                // Only the leader upgrades an older journal: two brokers never run the upgrade at once, and a standby of
                // this build waiting on an older leader leaves the journal as that leader reads it.
                try migrate(from: version)
                switch sync {
                case .everyCommit: try query("SET synchronous_commit = on")
                case .interval: try query("SET synchronous_commit = off")
                }
            } catch {
                close()
                throw error
            }
        }

        deinit { close() }

        /// The session settings that bound how long PostgreSQL keeps a dead broker's session (and its leader lock):
        /// keepalive probes after 1 s of silence, 1 s apart, 2 unanswered end the session; unacknowledged data for
        /// 3 s ends it too.
        static let sessionLiveness = [
            "SET tcp_keepalives_idle = 1", "SET tcp_keepalives_interval = 1", "SET tcp_keepalives_count = 2",
            "SET tcp_user_timeout = 3000",
        ]

        /// Checks that this session still holds the leader lock (a query outside any transaction); throws
        /// `journal-unavailable` when the connection is lost or the lock is gone.
        func checkLeadership() throws(JournalError) {
            let held = try query(
                PostgresJournalSchema.holdsLeaderLock, binds { $0.append(PostgresJournalSchema.leaderLockKey) })
            guard try held.rows.first?.cells(Int64.self, name) == 1 else {
                lost = true
                throw JournalError(
                    code: .unavailable,
                    message: "\(name): this session no longer holds the journal's leader lock: another broker may be "
                        + "active.")
            }
        }

        // MARK: Connecting

        /// What a URL names: the connection configuration and the URL without its password.
        struct Configuration {
            var connection: PostgresConnection.Configuration
            var name: String
        }

        /// Parses `postgres://user:password@host:port/database` (or `postgresql://`); `?sslmode=require` asks for TLS
        /// (with certificate verification), `prefer` tries it; without it the connection is plain TCP.
        static func configuration(_ url: String) throws(JournalError) -> Configuration {
            guard let components = URLComponents(string: url),
                let scheme = components.scheme?.lowercased(), scheme == "postgres" || scheme == "postgresql",
                let host = components.host, !host.isEmpty
            else {
                throw JournalError(
                    code: .invalidOperation,
                    message:
                        "\(redacted(url)) is not a PostgreSQL URL: give postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE."
                )
            }
            let user = components.user ?? "postgres"
            let database = components.path.count > 1 ? String(components.path.dropFirst()) : user
            let port = components.port ?? 5432
            var name = "\(scheme)://\(user)@\(host):\(port)/\(database)"
            if host.contains(":") { name = "\(scheme)://\(user)@[\(host)]:\(port)/\(database)" }
            let mode = components.queryItems?.first { $0.name == "sslmode" }?.value ?? "disable"
            let tls: PostgresConnection.Configuration.TLS
            do {
                switch mode {
                case "require", "verify-ca", "verify-full":
                    tls = .require(try NIOSSLContext(configuration: .makeClientConfiguration()))
                case "prefer": tls = .prefer(try NIOSSLContext(configuration: .makeClientConfiguration()))
                default: tls = .disable
                }
            } catch {
                throw JournalError(code: .unavailable, message: "\(name): cannot set up TLS: \(error).")
            }
            var configuration = PostgresConnection.Configuration(
                host: host, port: port, username: user, password: components.password, database: database, tls: tls)
            configuration.options.connectTimeout = .seconds(5)
            return Configuration(connection: configuration, name: name)
        }

        /// `url` without its password.
        static func redacted(_ url: String) -> String { JournalLocation.redacted(url) }

        static func connect(_ configuration: Configuration) throws(JournalError) -> PostgresConnection {
            let logger = Logger(label: "concierge.journal.postgres", factory: { _ in SwiftLogNoOpLogHandler() })
            do {
                return try PostgresConnection.connect(
                    on: MultiThreadedEventLoopGroup.singleton.any(), configuration: configuration.connection, id: 1,
                    logger: logger
                ).wait()
            } catch {
                throw JournalError(
                    code: .unavailable,
                    message:
                        "cannot connect to PostgreSQL at \(configuration.name): \(describe(error)). Check that the "
                        + "server runs and accepts this user from this host.")
            }
        }

        /// Checks that the database holds a journal of a version this build reads, and reads the fingerprint seeds;
        /// returns the schema version (``PostgresJournalSchema/version`` or an older one that ``migrate(from:)``
        /// upgrades).
        private func checkSchema() throws(JournalError) -> Int64 {
            let exists = try query("SELECT to_regclass('meta') IS NOT NULL")
            guard try exists.rows.first?.cells(Bool.self, name) == true else {
                throw JournalError(
                    code: .missing,
                    message: "\(name) holds no Concierge journal. A broker never creates its journal: create it with "
                        + "`concierge journal init URL` (or fix the URL's database).")
            }
            let rows = try query("SELECT key, value FROM meta")
            var meta: [String: Int64] = [:]
            for row in rows.rows {
                let (key, value) = try row.cells(String.self, Int64.self, name)
                meta[key] = value
            }
            guard let version = meta["schema_version"] else {
                throw JournalError(
                    code: .corrupt, message: "\(name): its table meta has no schema_version: not a Concierge journal.")
            }
            guard version <= PostgresJournalSchema.version else {
                throw JournalError(
                    code: .newerVersion,
                    message: "\(name) has schema version \(version), and this Concierge reads version "
                        + "\(PostgresJournalSchema.version) at most: run the newer Concierge that wrote it.")
            }
            guard version >= PostgresJournalSchema.oldestVersion, let one = meta["fingerprint_seed_1"],
                let two = meta["fingerprint_seed_2"]
            else {
                throw JournalError(
                    code: .corrupt,
                    message: "\(name) has schema version \(version), which no Concierge writes: damaged.")
            }
            fingerprintSeeds = [UInt64(bitPattern: one), UInt64(bitPattern: two)]
            return version
        }

        /// Upgrades a journal of an older schema version to ``PostgresJournalSchema/version`` in one transaction (run
        /// while this session holds the leader lock). The version row is updated only if it still holds `version`, so
        /// the upgrade cannot run twice.
        private func migrate(from version: Int64) throws(JournalError) {
            guard version < PostgresJournalSchema.version else { return }
            try query("BEGIN")
            do throws(JournalError) {
                for step in version..<PostgresJournalSchema.version {
                    guard let statements = PostgresJournalSchema.upgrades[step] else {
                        throw JournalError(
                            code: .corrupt,
                            message: "\(name): no upgrade from schema version \(step) exists in this build."
                        )
                    }
                    for statement in statements { try query(statement) }
                }
                let updated = try query(
                    PostgresJournalSchema.setVersion,
                    binds {
                        $0.append(PostgresJournalSchema.version)
                        $0.append(version)
                    })
                guard updated.metadata.rows == 1 else {
                    throw JournalError(
                        code: .corrupt, message: "\(name): its schema version changed while this broker upgraded it.")
                }
                try query("COMMIT")
            } catch {
                if !lost { _ = try? query("ROLLBACK") }
                throw error
            }
        }

        /// Creates the schema in one transaction; refuses a database that has a table `meta` already.
        static func create(url: String) throws(JournalError) {
            let configuration = try configuration(url)
            let connection = try connect(configuration)
            defer { _ = try? connection.close().wait() }
            let logger = Logger(label: "concierge.journal.postgres", factory: { _ in SwiftLogNoOpLogHandler() })
            func run(_ sql: String) throws(JournalError) -> PostgresQueryResult {
                do {
                    return try connection.query(PostgresQuery(unsafeSQL: sql), logger: logger).wait()
                } catch {
                    throw journalError(error, configuration.name, doing: "creating the journal")
                }
            }
            _ = try run("BEGIN")
            do throws(JournalError) {
                let exists = try run("SELECT to_regclass('meta') IS NOT NULL OR to_regclass('requests') IS NOT NULL")
                if try exists.rows.first?.cells(Bool.self, configuration.name) == true {
                    throw JournalError(
                        code: .exists,
                        message: "\(configuration.name) holds a journal (or a table meta or requests) already: an "
                            + "existing journal is never replaced. Use another database, or drop those tables first.")
                }
                for statement in PostgresJournalSchema.create { _ = try run(statement) }
                _ = try run("COMMIT")
            } catch {
                _ = try? run("ROLLBACK")
                if error.code == .io, error.message.contains("42P07") {
                    throw JournalError(
                        code: .exists,
                        message: "\(configuration.name) holds journal tables already: an existing journal is never "
                            + "replaced.")
                }
                throw error
            }
        }

        // MARK: Queries

        private func open() throws(JournalError) -> PostgresConnection {
            if lost {
                throw JournalError(
                    code: .unavailable,
                    message: "\(name): the connection to PostgreSQL was lost, and with it this broker's leadership; "
                        + "open the journal again (a broker does so by itself, and recovers from it).")
            }
            guard let connection else {
                throw JournalError(code: .invalidOperation, message: "\(name): the journal is closed.")
            }
            return connection
        }

        /// Runs one statement and waits for all its rows. A lost connection marks the journal lost.
        @discardableResult
        private func query(
            _ sql: String, _ binds: PostgresBindings = PostgresBindings(), timeout: TimeAmount = queryTimeout
        ) throws(JournalError) -> PostgresQueryResult {
            let connection = try open()
            statements += 1
            do {
                // A connection PostgreSQL closed (a restart) can leave a new query waiting forever: fail at once.
                guard !connection.isClosed else {
                    throw JournalError(
                        code: .unavailable,
                        message: "\(name): the connection to PostgreSQL is closed (the server restarted or went away), "
                            + "and with it this broker's leadership; it must open the journal again (and may find another broker active)."
                    )
                }
                return try Self.wait(
                    connection.query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: logger),
                    on: connection.eventLoop,
                    timeout: timeout)
            } catch {
                let converted = Self.journalError(error, name, doing: "running a query")
                if converted.code == .unavailable {
                    lost = true
                    let _: EventLoopFuture<Void> = connection.close()
                }
                throw converted
            }
        }

        /// How long a query may take before the connection counts as lost (a partitioned network, a hung server):
        /// the broker's loop waits meanwhile, so it is short; reading the whole journal at recovery gets longer.
        static let queryTimeout: TimeAmount = .seconds(5)
        static let recoveryTimeout: TimeAmount = .seconds(120)

        /// Blocks until `future` completes, or fails it after `timeout` (``queryTimeout`` by default).
        static func wait<T: Sendable>(
            _ future: EventLoopFuture<T>, on eventLoop: any EventLoop, timeout limit: TimeAmount = queryTimeout
        ) throws -> T {
            let promise = eventLoop.makePromise(of: T.self)
            future.cascade(to: promise)
            let timeout = eventLoop.scheduleTask(in: limit) {
                promise.fail(
                    JournalError(
                        code: .unavailable,
                        message: "PostgreSQL did not answer within \(limit.nanoseconds / 1_000_000_000) seconds"))
            }
            defer { timeout.cancel() }
            return try promise.futureResult.wait()
        }

        private func binds(_ fill: (inout PostgresBindings) -> Void) -> PostgresBindings {
            var bindings = PostgresBindings()
            fill(&bindings)
            return bindings
        }

        /// A message for any error of PostgresNIO, without the URL (`PSQLError`'s `description` hides everything).
        static func describe(_ error: any Error) -> String {
            guard let error = error as? PSQLError else { return String(describing: error) }
            if let info = error.serverInfo {
                return "\(info[.message] ?? "error") (SQLSTATE \(info[.sqlState] ?? "?"))"
            }
            if let underlying = error.underlying { return "\(error.code): \(underlying)" }
            return "\(error.code)"
        }

        /// Converts an error of PostgresNIO: integrity and data errors are the caller's (`journal-invalid-operation`),
        /// a lost or refused connection is `journal-unavailable`, any other server error is `journal-io`.
        static func journalError(_ error: any Error, _ name: String, doing what: String) -> JournalError {
            if let error = error as? JournalError { return error }
            if error is PostgresDecodingError {
                return JournalError(code: .corrupt, message: "\(name): a stored value cannot be read: \(error).")
            }
            guard let psql = error as? PSQLError else {
                return JournalError(code: .unavailable, message: "\(name): \(what) failed: \(describe(error)).")
            }
            guard psql.code == .server, let state = psql.serverInfo?[.sqlState] else {
                return JournalError(
                    code: .unavailable,
                    message: "\(name): the connection to PostgreSQL failed while \(what) (\(describe(error))). Nothing "
                        + "acknowledged is lost; the broker refuses new work (`unavailable`) until PostgreSQL is back.")
            }
            if state.hasPrefix("23") || state.hasPrefix("22") {
                return JournalError(
                    code: .invalidOperation,
                    message: "\(name): \(describe(error)). The commit was rolled back: nothing of it is written.")
            }
            if state.hasPrefix("08") || state.hasPrefix("57P") || state.hasPrefix("28") || state == "3D000" {
                return JournalError(code: .unavailable, message: "\(name): \(what) failed: \(describe(error)).")
            }
            return JournalError(code: .io, message: "\(name): \(what) failed: \(describe(error)).")
        }

        // MARK: Recovery

        func recover() throws(JournalError) -> JournalState {
            try query("BEGIN ISOLATION LEVEL REPEATABLE READ")
            do throws(JournalError) {
                let state = try read()
                try query("COMMIT")
                return state
            } catch {
                if !lost { _ = try? query("ROLLBACK") }
                throw error
            }
        }

        private func read() throws(JournalError) -> JournalState {
            var state = JournalState()
            var index: [UInt64: Int] = [:]
            for row in try query(PostgresJournalSchema.selectRequests, timeout: Self.recoveryTimeout).rows {
                let c = Cells(row, name)
                let id = UInt64(bitPattern: try c.int64(0))
                index[id] = state.requests.count
                state.requests.append(
                    JournalRequest(
                        id: id, client: try c.bytes(1), requestID: try c.bytes(2), identity: try c.bytes(3),
                        intentType: try c.bytes(4), phase: try c.text(5), body: try c.bytes(6),
                        deadlineMilliseconds: Int(try c.int64(7)), acceptedAt: try c.int64(8),
                        idempotencyKey: try c.optionalBytes(9), attempt: Int(try c.int64(10)),
                        version: try c.version(11),
                        handleDispatched: try c.bool(12)))
            }
            for row in try query(PostgresJournalSchema.selectListeners, timeout: Self.recoveryTimeout).rows {
                let c = Cells(row, name)
                // The foreign key forbids a listener without its request.
                guard let at = index[UInt64(bitPattern: try c.int64(0))] else { continue }
                let actAt = try c.int64(4)
                state.requests[at].listeners.append(
                    JournalRequestKey(
                        client: try c.bytes(1), requestID: try c.bytes(2), version: try c.version(3),
                        actAt: actAt == 0 ? nil : actAt))
            }
            for row in try query(PostgresJournalSchema.selectResults, timeout: Self.recoveryTimeout).rows {
                let c = Cells(row, name)
                state.results.append(
                    JournalResult(
                        key: JournalRequestKey(
                            client: try c.bytes(0), requestID: try c.bytes(1), version: try c.version(2)),
                        isError: try c.bool(3), phase: try c.text(4), body: try c.bytes(5), storedAt: try c.int64(6)))
            }
            for row in try query(PostgresJournalSchema.selectKeyRecords, timeout: Self.recoveryTimeout).rows {
                let c = Cells(row, name)
                let recordState: JournalKeyRecord.State
                let stored = try c.int16(5)
                switch StoredState(rawValue: stored) {
                case .inFlight: recordState = .inFlight(request: UInt64(bitPattern: try c.optionalInt64(6) ?? 0))
                case .completed:
                    recordState = .completed(
                        isError: try c.optionalBool(7) ?? false, phase: try c.optionalText(8) ?? "",
                        body: try c.optionalBytes(9) ?? [])
                case .outcomeUnknown: recordState = .outcomeUnknown
                case nil:
                    throw JournalError(
                        code: .corrupt, message: "\(name): a key record has state \(stored), which no Concierge writes."
                    )
                }
                state.keyRecords.append(
                    JournalKeyRecord(
                        identity: try c.bytes(0), intentType: try c.bytes(1), key: try c.bytes(2),
                        fingerprint: try c.bytes(3), attempts: Int(try c.int64(4)), state: recordState,
                        endedAt: try c.optionalInt64(10)))
            }
            for row in try query(PostgresJournalSchema.selectConversations, timeout: Self.recoveryTimeout).rows {
                let c = Cells(row, name)
                state.conversations.append(
                    JournalConversation(
                        scope: try c.bytes(0), id: try c.bytes(1), state: try c.bytes(2), updatedAt: try c.int64(3)))
            }
            var next: UInt64 = 1
            if let row = try query(PostgresJournalSchema.selectNextID).rows.first {
                next = max(next, UInt64(bitPattern: try Cells(row, name).int64(0)))
            }
            if let last = state.requests.last { next = max(next, last.id + 1) }
            state.nextRequestID = next
            return state
        }

        // MARK: Commit

        /// One transaction: BEGIN, the fence (this session still holds the leader lock), a constant number of set-based
        /// statements (see ``PostgresJournalBatch``), COMMIT. The round trips do not grow with the batch.
        func commit(_ operations: [JournalOperation]) throws(JournalError) {
            guard !operations.isEmpty else { return }
            _ = try open()
            let start = clock.now
            try query("BEGIN")
            do throws(JournalError) {
                let held = try query(
                    PostgresJournalSchema.holdsLeaderLock, binds { $0.append(PostgresJournalSchema.leaderLockKey) })
                guard try held.rows.first?.cells(Int64.self, name) == 1 else {
                    throw JournalError(
                        code: .unavailable,
                        message: "\(name): this session no longer holds the journal's leader lock: another broker may "
                            + "be active. Nothing of this commit is written.")
                }
                let batch: PostgresJournalBatch
                do {
                    batch = try PostgresJournalBatch(operations)
                } catch {
                    throw invalid("request id \(error.id) is out of range (1 up to 2^63 - 2)")
                }
                for segment in batch.segments { try apply(segment) }
                try query("COMMIT")
            } catch {
                if !lost { _ = try? query("ROLLBACK") }
                throw error
            }
            let elapsed = start.duration(to: clock.now).components
            recorder.recordCommit(
                operations: operations.count,
                nanoseconds: UInt64(elapsed.seconds) * 1_000_000_000 + UInt64(elapsed.attoseconds / 1_000_000_000))
        }

        /// Applies one segment in at most four kinds of statements: the deletes of results and key records (expiries and
        /// removals, seldom there); one statement inserting the requests, advancing the next id and upserting results and
        /// key records (different tables, so they can share a statement); the listeners' delete and insert (duplicates
        /// only); one statement setting `handle_dispatched` and deleting the ended requests, whose counts check that
        /// every handle dispatch and ending found its open request. The order is the one ``PostgresJournalBatch``
        /// explains, each table's statements in it.
        private func apply(_ segment: PostgresJournalBatch.Segment) throws(JournalError) {
            if let storedBefore = segment.resultsExpireBefore {
                try query(PostgresJournalSchema.expireResults, binds { $0.append(storedBefore) })
            }
            if !segment.resultDeletes.isEmpty {
                let keys = segment.resultDeletes
                try query(
                    PostgresJournalSchema.deleteResults,
                    binds {
                        $0.append(keys.map { ByteBuffer(bytes: $0.client) })
                        $0.append(keys.map { ByteBuffer(bytes: $0.requestID) })
                        $0.append(keys.map { Int16($0.version) })
                    })
            }
            if let endedBefore = segment.keyRecordsExpireBefore {
                try query(PostgresJournalSchema.expireKeyRecords, binds { $0.append(endedBefore) })
            }
            if !segment.keyRecordDeletes.isEmpty {
                let keys = segment.keyRecordDeletes
                try query(
                    PostgresJournalSchema.deleteKeyRecords,
                    binds {
                        $0.append(keys.map { ByteBuffer(bytes: $0.identity) })
                        $0.append(keys.map { ByteBuffer(bytes: $0.intentType) })
                        $0.append(keys.map { ByteBuffer(bytes: $0.key) })
                    })
            }
            if !segment.conversationDeletes.isEmpty {
                let keys = segment.conversationDeletes
                try query(
                    PostgresJournalSchema.deleteConversations,
                    binds {
                        $0.append(keys.map { ByteBuffer(bytes: $0.scope) })
                        $0.append(keys.map { ByteBuffer(bytes: $0.id) })
                    })
            }
            var writes: [Part] = []
            if let highest = segment.highestAccepted {
                let requests = segment.accepted
                writes.append(
                    Part(PostgresJournalSchema.insertRequests) {
                        $0.append(requests.map { Int64($0.id) })
                        $0.append(requests.map { ByteBuffer(bytes: $0.client) })
                        $0.append(requests.map { ByteBuffer(bytes: $0.requestID) })
                        $0.append(requests.map { ByteBuffer(bytes: $0.identity) })
                        $0.append(requests.map { ByteBuffer(bytes: $0.intentType) })
                        $0.append(requests.map(\.phase))
                        $0.append(requests.map { ByteBuffer(bytes: $0.body) })
                        $0.append(requests.map { Int64($0.deadlineMilliseconds) })
                        $0.append(requests.map(\.acceptedAt))
                        $0.append(requests.map { ByteBuffer(bytes: $0.idempotencyKey ?? []) })
                        $0.append(requests.map { $0.idempotencyKey != nil })
                        $0.append(requests.map { Int64($0.attempt) })
                        $0.append(requests.map { Int16($0.version) })
                        $0.append(requests.map(\.handleDispatched))
                    })
                writes.append(Part(PostgresJournalSchema.advanceNextID) { $0.append(Int64(highest) + 1) })
            }
            if !segment.results.isEmpty {
                let results = segment.results
                writes.append(
                    Part(PostgresJournalSchema.upsertResults) {
                        $0.append(results.map { ByteBuffer(bytes: $0.key.client) })
                        $0.append(results.map { ByteBuffer(bytes: $0.key.requestID) })
                        $0.append(results.map { Int16($0.key.version) })
                        $0.append(results.map(\.isError))
                        $0.append(results.map(\.phase))
                        $0.append(results.map { ByteBuffer(bytes: $0.body) })
                        $0.append(results.map(\.storedAt))
                    })
            }
            if !segment.keyRecords.isEmpty {
                let records = segment.keyRecords
                writes.append(Part(PostgresJournalSchema.upsertKeyRecords) { Self.appendKeyRecords(records, to: &$0) })
            }
            if !segment.conversations.isEmpty {
                let conversations = segment.conversations
                writes.append(
                    Part(PostgresJournalSchema.upsertConversations) {
                        $0.append(conversations.map { ByteBuffer(bytes: $0.scope) })
                        $0.append(conversations.map { ByteBuffer(bytes: $0.id) })
                        $0.append(conversations.map { ByteBuffer(bytes: $0.state) })
                        $0.append(conversations.map(\.updatedAt))
                    })
            }
            _ = try run(writes)
            if !segment.listenerDeletes.isEmpty {
                let listeners = segment.listenerDeletes
                try query(PostgresJournalSchema.deleteListeners, binds { Self.appendListeners(listeners, to: &$0) })
            }
            if !segment.listenerInserts.isEmpty {
                let listeners = segment.listenerInserts
                try query(
                    PostgresJournalSchema.insertListeners,
                    binds {
                        Self.appendListeners(listeners, to: &$0)
                        $0.append(listeners.map { $0.key.actAt ?? 0 })
                    })
            }
            // A request dispatched and ended in the segment is only deleted: the delete's count checks it was open (two
            // parts of one statement must not touch the same row).
            let ended = Set(segment.ended)
            let dispatched = segment.dispatched.filter { !ended.contains($0) }
            var closing: [Part] = []
            if !dispatched.isEmpty {
                closing.append(
                    Part(PostgresJournalSchema.dispatchRequests) { $0.append(dispatched.map { Int64(bitPattern: $0) }) }
                )
            }
            if !segment.ended.isEmpty {
                let ids = segment.ended
                closing.append(
                    Part(PostgresJournalSchema.deleteRequests) { $0.append(ids.map { Int64(bitPattern: $0) }) })
            }
            var counts = try run(closing)[...]
            if !dispatched.isEmpty, let found = counts.popFirst(), found != dispatched.count {
                throw invalid("handle dispatched for \(notOpen(dispatched.count, found)) not open")
            }
            if !segment.ended.isEmpty, let found = counts.popFirst(), found != segment.ended.count {
                throw invalid("\(notOpen(segment.ended.count, found)) ended but not open")
            }
        }

        /// One part of a combined statement: its SQL (parameters from `$1`) and what fills its parameters.
        private struct Part {
            var sql: String
            var fill: (inout PostgresBindings) -> Void

            init(_ sql: String, _ fill: @escaping (inout PostgresBindings) -> Void) {
                self.sql = sql
                self.fill = fill
            }
        }

        /// Runs `parts` as one statement (``PostgresJournalSchema/combined(_:)``): one round trip; returns how many rows
        /// each part wrote. Nothing is sent for no parts.
        private func run(_ parts: [Part]) throws(JournalError) -> [Int] {
            guard !parts.isEmpty else { return [] }
            var bindings = PostgresBindings()
            for part in parts { part.fill(&bindings) }
            let result = try query(PostgresJournalSchema.combined(parts.map(\.sql)), bindings)
            guard let row = result.rows.first else {
                throw JournalError(code: .corrupt, message: "\(name): PostgreSQL answered a statement without its row.")
            }
            let cells = Cells(row, name)
            var counts: [Int] = []
            for index in parts.indices { counts.append(Int(try cells.int64(index))) }
            return counts
        }

        /// "request 7" or "3 of 50 requests" (those not found), for messages.
        private func notOpen(_ expected: Int, _ found: Int) -> String {
            expected == 1 ? "a request" : "\(expected - found) of \(expected) requests"
        }

        private static func appendListeners(
            _ listeners: [PostgresJournalBatch.Listener], to bindings: inout PostgresBindings
        ) {
            bindings.append(listeners.map { Int64(bitPattern: $0.request) })
            bindings.append(listeners.map { ByteBuffer(bytes: $0.key.client) })
            bindings.append(listeners.map { ByteBuffer(bytes: $0.key.requestID) })
            bindings.append(listeners.map { Int16($0.key.version) })
        }

        private static func appendKeyRecords(_ records: [JournalKeyRecord], to bindings: inout PostgresBindings) {
            var states: [Int16] = []
            var requests: [Int64] = []
            var isErrors: [Bool] = []
            var phases: [String] = []
            var bodies: [ByteBuffer] = []
            for record in records {
                switch record.state {
                case .inFlight(let request):
                    states.append(StoredState.inFlight.rawValue)
                    requests.append(Int64(bitPattern: request))
                    isErrors.append(false)
                    phases.append("")
                    bodies.append(ByteBuffer())
                case .completed(let isError, let phase, let body):
                    states.append(StoredState.completed.rawValue)
                    requests.append(0)
                    isErrors.append(isError)
                    phases.append(phase)
                    bodies.append(ByteBuffer(bytes: body))
                case .outcomeUnknown:
                    states.append(StoredState.outcomeUnknown.rawValue)
                    requests.append(0)
                    isErrors.append(false)
                    phases.append("")
                    bodies.append(ByteBuffer())
                }
            }
            bindings.append(records.map { ByteBuffer(bytes: $0.identity) })
            bindings.append(records.map { ByteBuffer(bytes: $0.intentType) })
            bindings.append(records.map { ByteBuffer(bytes: $0.key) })
            bindings.append(records.map { ByteBuffer(bytes: $0.fingerprint) })
            bindings.append(records.map { Int64($0.attempts) })
            bindings.append(states)
            bindings.append(requests)
            bindings.append(isErrors)
            bindings.append(phases)
            bindings.append(bodies)
            bindings.append(records.map { $0.endedAt != nil })
            bindings.append(records.map { $0.endedAt ?? 0 })
        }

        private func invalid(_ what: String) -> JournalError {
            JournalError(
                code: .invalidOperation,
                message: "\(name): \(what). The commit was rolled back: nothing of it is written.")
        }

        /// Releases the leader lock while the connection stays open (tests of the fence: the next commit must fail).
        func releaseLeadership() throws(JournalError) {
            try query("SELECT pg_advisory_unlock($1)", binds { $0.append(PostgresJournalSchema.leaderLockKey) })
        }

        // MARK: Close

        /// Releases the leader lock and closes the connection (idempotent).
        func close() {
            guard let connection else { return }
            if !lost, !connection.isClosed {
                _ = try? Self.wait(
                    connection.query(
                        PostgresQuery(
                            unsafeSQL: "SELECT pg_advisory_unlock($1)",
                            binds: binds { $0.append(PostgresJournalSchema.leaderLockKey) }), logger: logger),
                    on: connection.eventLoop)
            }
            _ = try? Self.wait(connection.close(), on: connection.eventLoop)
            self.connection = nil
        }

        var statistics: JournalStatistics { recorder.statistics }
    }

    /// Typed access to the cells of one row, converting decoding errors to `journal-corrupt`.
    private struct Cells {
        let cells: [PostgresCell]
        let name: String

        init(_ row: PostgresRow, _ name: String) {
            cells = Array(row)
            self.name = name
        }

        private func decode<T: PostgresDecodable>(_ type: T.Type, _ index: Int) throws(JournalError) -> T {
            guard index < cells.count else {
                throw JournalError(
                    code: .corrupt, message: "\(name): a row has \(cells.count) columns, not \(index + 1).")
            }
            do {
                return try cells[index].decode(T.self)
            } catch {
                throw JournalError(code: .corrupt, message: "\(name): a stored value cannot be read: \(error).")
            }
        }

        func int64(_ i: Int) throws(JournalError) -> Int64 { try decode(Int64.self, i) }
        func optionalInt64(_ i: Int) throws(JournalError) -> Int64? { try decode(Int64?.self, i) }
        func int16(_ i: Int) throws(JournalError) -> Int16 { try decode(Int16.self, i) }
        func bool(_ i: Int) throws(JournalError) -> Bool { try decode(Bool.self, i) }
        func optionalBool(_ i: Int) throws(JournalError) -> Bool? { try decode(Bool?.self, i) }
        func text(_ i: Int) throws(JournalError) -> String { try decode(String.self, i) }
        func optionalText(_ i: Int) throws(JournalError) -> String? { try decode(String?.self, i) }
        func bytes(_ i: Int) throws(JournalError) -> [UInt8] { Array(try decode(ByteBuffer.self, i).readableBytesView) }
        func optionalBytes(_ i: Int) throws(JournalError) -> [UInt8]? {
            try decode(ByteBuffer?.self, i).map { Array($0.readableBytesView) }
        }
        func version(_ i: Int) throws(JournalError) -> UInt8 {
            let value = try int16(i)
            guard let version = UInt8(exactly: value) else {
                throw JournalError(code: .corrupt, message: "\(name): a protocol version of \(value) is stored.")
            }
            return version
        }
    }

    extension PostgresRow {
        /// The first cell, decoded.
        fileprivate func cells<A: PostgresDecodable>(_ a: A.Type, _ name: String) throws(JournalError) -> A {
            let cells = Array(self)
            guard let first = cells.first else {
                throw JournalError(code: .corrupt, message: "\(name): PostgreSQL answered a row without columns.")
            }
            do { return try first.decode(A.self) } catch {
                throw JournalError(code: .corrupt, message: "\(name): unexpected answer: \(error).")
            }
        }

        /// The first two cells, decoded.
        fileprivate func cells<A: PostgresDecodable, B: PostgresDecodable>(
            _ a: A.Type, _ b: B.Type, _ name: String
        ) throws(JournalError) -> (A, B) {
            let cells = Array(self)
            guard cells.count >= 2 else {
                throw JournalError(
                    code: .corrupt, message: "\(name): PostgreSQL answered a row of \(cells.count) columns.")
            }
            do { return (try cells[0].decode(A.self), try cells[1].decode(B.self)) } catch {
                throw JournalError(code: .corrupt, message: "\(name): unexpected answer: \(error).")
            }
        }
    }
#endif  // PostgreSQL
