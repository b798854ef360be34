#if PostgreSQL
    /// The PostgreSQL journal's schema (version 2): the SQLite journal's tables with PostgreSQL types.
    ///
    /// Request ids are `bigint` (at most `Int64.max`); listeners go with their request (`ON DELETE CASCADE`); `seq`
    /// (one sequence, `journal_seq`) keeps listeners, results, key records and conversations in the order they were
    /// written, and a replaced result, key record or conversation takes a new `seq`, as SQLite's `INSERT OR REPLACE` gives it a new rowid. `meta`
    /// holds the schema version, the next request id and the two fingerprint seeds.
    enum PostgresJournalSchema {
        /// The schema version this build writes and reads (`meta.schema_version`).
        static let version: Int64 = 2
        /// The oldest schema version this build opens: the leader upgrades an older one in place (``upgrades``).
        static let oldestVersion: Int64 = 1

        /// The key of the session advisory lock the active broker holds ("ConcJnl1"): `pg_try_advisory_lock(key)`.
        static let leaderLockKey: Int64 = 0x436F_6E63_4A6E_6C31

        /// A random 64-bit integer from PostgreSQL's strong random source (`gen_random_uuid`, PostgreSQL 13 and later):
        /// 64 bits of the MD5 of two version-4 UUIDs (244 random bits).
        static let randomBigint = "('x' || md5(gen_random_uuid()::text || gen_random_uuid()::text))::bit(64)::bigint"

        /// The statements of `create`, run in one transaction.
        static let create: [String] = [
            "CREATE SEQUENCE journal_seq",
            "CREATE TABLE meta(key text PRIMARY KEY, value bigint NOT NULL)",
            """
            INSERT INTO meta(key, value) VALUES('schema_version', \(version)), ('next_request_id', 1),
                ('fingerprint_seed_1', \(randomBigint)), ('fingerprint_seed_2', \(randomBigint))
            """,
            """
            CREATE TABLE requests(
                id bigint PRIMARY KEY,
                client bytea NOT NULL, request_id bytea NOT NULL, identity bytea NOT NULL, intent_type bytea NOT NULL,
                phase text NOT NULL, body bytea NOT NULL, deadline_ms bigint NOT NULL, accepted_at bigint NOT NULL,
                idempotency_key bytea, attempt bigint NOT NULL, version smallint NOT NULL,
                handle_dispatched boolean NOT NULL DEFAULT false
            )
            """,
            """
            CREATE TABLE listeners(
                seq bigint PRIMARY KEY DEFAULT nextval('journal_seq'),
                request bigint NOT NULL REFERENCES requests(id) ON DELETE CASCADE,
                client bytea NOT NULL, request_id bytea NOT NULL, version smallint NOT NULL,
                act_at bigint NOT NULL DEFAULT 0
            )
            """,
            "CREATE INDEX listeners_by_request ON listeners(request)",
            """
            CREATE TABLE results(
                seq bigint PRIMARY KEY DEFAULT nextval('journal_seq'),
                client bytea NOT NULL, request_id bytea NOT NULL, version smallint NOT NULL,
                is_error boolean NOT NULL, phase text NOT NULL, body bytea NOT NULL, stored_at bigint NOT NULL,
                UNIQUE(client, request_id, version)
            )
            """,
            "CREATE INDEX results_by_time ON results(stored_at)",
            """
            CREATE TABLE key_records(
                seq bigint PRIMARY KEY DEFAULT nextval('journal_seq'),
                identity bytea NOT NULL, intent_type bytea NOT NULL, key bytea NOT NULL, fingerprint bytea NOT NULL,
                attempts bigint NOT NULL, state smallint NOT NULL, request bigint, is_error boolean, phase text,
                body bytea, ended_at bigint,
                UNIQUE(identity, intent_type, key)
            )
            """,
            "CREATE INDEX key_records_by_end ON key_records(ended_at)",
            createConversations,
        ]

        /// The table of version 2: one row per (scope, id), the broker's JSON document of the conversation in `state`.
        static let createConversations = """
            CREATE TABLE conversations(
                seq bigint PRIMARY KEY DEFAULT nextval('journal_seq'),
                scope bytea NOT NULL, id bytea NOT NULL, state bytea NOT NULL, updated_at bigint NOT NULL,
                UNIQUE(scope, id)
            )
            """

        /// The statements that bring a journal of each older version to the next one, keyed by the older version; the
        /// store runs them and the version update in one transaction, holding the leader lock.
        static let upgrades: [Int64: [String]] = [1: [createConversations]]
        /// Sets the schema version (`$1`) after an upgrade; `$2` is the version upgraded from (a guard).
        static let setVersion = "UPDATE meta SET value = $1 WHERE key = 'schema_version' AND value = $2"

        static let expireResults = "DELETE FROM results WHERE stored_at < $1"
        static let expireKeyRecords = "DELETE FROM key_records WHERE ended_at < $1"
        // MARK: Set-based statements (one per kind of operation; arrays bound as parameters, `unnest` makes the rows)

        /// Inserts the requests of ``PostgresJournalBatch/Segment/accepted``: one array per column; `$11` says which
        /// requests have an idempotency key (`$10` holds an empty one otherwise).
        static let insertRequests = """
            INSERT INTO requests(id, client, request_id, identity, intent_type, phase, body, deadline_ms, accepted_at,
                idempotency_key, attempt, version, handle_dispatched)
            SELECT id, client, request_id, identity, intent_type, phase, body, deadline_ms, accepted_at,
                CASE WHEN has_key THEN idempotency_key END, attempt, version, handle_dispatched
            FROM unnest($1::bigint[], $2::bytea[], $3::bytea[], $4::bytea[], $5::bytea[], $6::text[], $7::bytea[],
                $8::bigint[], $9::bigint[], $10::bytea[], $11::boolean[], $12::bigint[], $13::smallint[], $14::boolean[])
                AS u(id, client, request_id, identity, intent_type, phase, body, deadline_ms, accepted_at,
                    idempotency_key, has_key, attempt, version, handle_dispatched)
            """
        static let advanceNextID = "UPDATE meta SET value = $1 WHERE key = 'next_request_id' AND value < $1"

        /// One statement that runs `parts` (INSERT, UPDATE or DELETE statements without RETURNING, each numbering its
        /// parameters from `$1`) as data-modifying common table expressions, their parameters numbered one after the
        /// other; it answers one row: how many rows each part wrote. The parts run on one snapshot and must not touch the
        /// same rows (nor depend on each other's rows, except through foreign keys, which are checked at the end).
        static func combined(_ parts: [String]) -> String {
            var offset = 0
            var expressions: [String] = []
            var counts: [String] = []
            for (index, part) in parts.enumerated() {
                let (sql, parameters) = renumbered(part, after: offset)
                expressions.append("p\(index) AS (\(sql) RETURNING 1)")
                counts.append("(SELECT count(*) FROM p\(index))")
                offset += parameters
            }
            return "WITH " + expressions.joined(separator: ",\n") + "\nSELECT " + counts.joined(separator: ", ")
        }

        /// `sql` with every parameter `$n` made `$(n + offset)`, and the highest `n` (how many parameters it takes).
        static func renumbered(_ sql: String, after offset: Int) -> (sql: String, parameters: Int) {
            var output = ""
            var highest = 0
            var characters = sql[...]
            while let dollar = characters.firstIndex(of: "$") {
                output += characters[..<dollar]
                let digits = characters[characters.index(after: dollar)...].prefix { $0.isASCII && $0.isNumber }
                if let number = Int(digits) {
                    highest = max(highest, number)
                    output += "$\(number + offset)"
                } else {
                    output += "$"
                }
                characters = characters[digits.endIndex...]
            }
            output += characters
            return (output, highest)
        }

        /// Deletes the listeners of the pairs (request, client, request id, version) given as four arrays.
        static let deleteListeners = """
            DELETE FROM listeners l
            USING unnest($1::bigint[], $2::bytea[], $3::bytea[], $4::smallint[]) AS d(request, client, request_id, version)
            WHERE l.request = d.request AND l.client = d.client AND l.request_id = d.request_id AND l.version = d.version
            """
        /// Inserts listeners in the order of the arrays (so their `seq` follows it).
        static let insertListeners = """
            INSERT INTO listeners(request, client, request_id, version, act_at)
            SELECT request, client, request_id, version, act_at
            FROM unnest($1::bigint[], $2::bytea[], $3::bytea[], $4::smallint[], $5::bigint[]) WITH ORDINALITY
                AS u(request, client, request_id, version, act_at, ord)
            ORDER BY ord
            """
        static let dispatchRequests = "UPDATE requests SET handle_dispatched = true WHERE id = ANY($1::bigint[])"
        static let deleteRequests = "DELETE FROM requests WHERE id = ANY($1::bigint[])"
        /// Deletes the results of the keys (client, request id, version) given as three arrays.
        static let deleteResults = """
            DELETE FROM results r
            USING unnest($1::bytea[], $2::bytea[], $3::smallint[]) AS d(client, request_id, version)
            WHERE r.client = d.client AND r.request_id = d.request_id AND r.version = d.version
            """
        /// Inserts or replaces results in the order of the arrays (the keys are distinct: one statement cannot touch a
        /// row twice); a replaced result takes a new `seq`.
        static let upsertResults = """
            INSERT INTO results(client, request_id, version, is_error, phase, body, stored_at)
            SELECT client, request_id, version, is_error, phase, body, stored_at
            FROM unnest($1::bytea[], $2::bytea[], $3::smallint[], $4::boolean[], $5::text[], $6::bytea[], $7::bigint[])
                WITH ORDINALITY AS u(client, request_id, version, is_error, phase, body, stored_at, ord)
            ORDER BY ord
            ON CONFLICT (client, request_id, version) DO UPDATE SET seq = nextval('journal_seq'),
                is_error = EXCLUDED.is_error, phase = EXCLUDED.phase, body = EXCLUDED.body, stored_at = EXCLUDED.stored_at
            """
        /// Deletes the key records of the keys (identity, intent type, key) given as three arrays.
        static let deleteKeyRecords = """
            DELETE FROM key_records k
            USING unnest($1::bytea[], $2::bytea[], $3::bytea[]) AS d(identity, intent_type, key)
            WHERE k.identity = d.identity AND k.intent_type = d.intent_type AND k.key = d.key
            """
        /// Inserts or replaces key records in the order of the arrays (distinct keys). The state (`$6`: 0 in flight,
        /// 1 completed, 2 outcome unknown) says which of `request` and `is_error`, `phase`, `body` are set; `$11` says
        /// which records have an `ended_at`.
        static let upsertKeyRecords = """
            INSERT INTO key_records(identity, intent_type, key, fingerprint, attempts, state, request, is_error, phase,
                body, ended_at)
            SELECT identity, intent_type, key, fingerprint, attempts, state, CASE WHEN state = 0 THEN request END,
                CASE WHEN state = 1 THEN is_error END, CASE WHEN state = 1 THEN phase END,
                CASE WHEN state = 1 THEN body END, CASE WHEN has_ended THEN ended_at END
            FROM unnest($1::bytea[], $2::bytea[], $3::bytea[], $4::bytea[], $5::bigint[], $6::smallint[], $7::bigint[],
                $8::boolean[], $9::text[], $10::bytea[], $11::boolean[], $12::bigint[]) WITH ORDINALITY
                AS u(identity, intent_type, key, fingerprint, attempts, state, request, is_error, phase, body, has_ended,
                    ended_at, ord)
            ORDER BY ord
            ON CONFLICT (identity, intent_type, key) DO UPDATE SET seq = nextval('journal_seq'),
                fingerprint = EXCLUDED.fingerprint, attempts = EXCLUDED.attempts, state = EXCLUDED.state,
                request = EXCLUDED.request, is_error = EXCLUDED.is_error, phase = EXCLUDED.phase, body = EXCLUDED.body,
                ended_at = EXCLUDED.ended_at
            """

        /// Deletes the conversations (scope, id) given as two arrays.
        static let deleteConversations = """
            DELETE FROM conversations c
            USING unnest($1::bytea[], $2::bytea[]) AS d(scope, id)
            WHERE c.scope = d.scope AND c.id = d.id
            """
        /// Inserts or replaces conversations in the order of the arrays (distinct keys); a replaced one takes a new `seq`.
        static let upsertConversations = """
            INSERT INTO conversations(scope, id, state, updated_at)
            SELECT scope, id, state, updated_at
            FROM unnest($1::bytea[], $2::bytea[], $3::bytea[], $4::bigint[]) WITH ORDINALITY
                AS u(scope, id, state, updated_at, ord)
            ORDER BY ord
            ON CONFLICT (scope, id) DO UPDATE SET seq = nextval('journal_seq'), state = EXCLUDED.state,
                updated_at = EXCLUDED.updated_at
            """

        /// Whether this session holds the leader lock (the fence before every commit).
        static let holdsLeaderLock = """
            SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid() AND granted
                AND objsubid = 1 AND ((classid::bigint << 32) | objid::bigint) = $1
            """
        static let selectRequests = """
            SELECT id, client, request_id, identity, intent_type, phase, body, deadline_ms, accepted_at, idempotency_key,
                attempt, version, handle_dispatched
            FROM requests ORDER BY id
            """
        static let selectListeners = "SELECT request, client, request_id, version, act_at FROM listeners ORDER BY seq"
        static let selectResults =
            "SELECT client, request_id, version, is_error, phase, body, stored_at FROM results ORDER BY seq"
        static let selectKeyRecords = """
            SELECT identity, intent_type, key, fingerprint, attempts, state, request, is_error, phase, body, ended_at
            FROM key_records ORDER BY seq
            """
        static let selectConversations = "SELECT scope, id, state, updated_at FROM conversations ORDER BY seq"
        static let selectNextID = "SELECT value FROM meta WHERE key = 'next_request_id'"
    }
#endif  // PostgreSQL
