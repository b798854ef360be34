/// The PostgreSQL journal's schema (version 1): the SQLite journal's tables with PostgreSQL types.
///
/// Request ids are `bigint` (at most `Int64.max`); listeners go with their request (`ON DELETE CASCADE`); `seq`
/// (one sequence, `journal_seq`) keeps listeners, results and key records in the order they were written, and a
/// replaced result or key record takes a new `seq`, as SQLite's `INSERT OR REPLACE` gives it a new rowid. `meta`
/// holds the schema version, the next request id and the two fingerprint seeds.
enum PostgresJournalSchema {
    /// The schema version this build writes and reads (`meta.schema_version`).
    static let version: Int64 = 1

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
            client bytea NOT NULL, request_id bytea NOT NULL, version smallint NOT NULL
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
    ]

    static let insertRequest = """
        INSERT INTO requests(id, client, request_id, identity, intent_type, phase, body, deadline_ms, accepted_at,
            idempotency_key, attempt, version, handle_dispatched)
        VALUES($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
        """
    static let insertListener = "INSERT INTO listeners(request, client, request_id, version) VALUES($1, $2, $3, $4)"
    static let deleteListener =
        "DELETE FROM listeners WHERE request = $1 AND client = $2 AND request_id = $3 AND version = $4"
    static let dispatch = "UPDATE requests SET handle_dispatched = true WHERE id = $1"
    static let deleteRequest = "DELETE FROM requests WHERE id = $1"
    static let upsertResult = """
        INSERT INTO results(client, request_id, version, is_error, phase, body, stored_at)
        VALUES($1, $2, $3, $4, $5, $6, $7)
        ON CONFLICT (client, request_id, version) DO UPDATE SET seq = nextval('journal_seq'),
            is_error = EXCLUDED.is_error, phase = EXCLUDED.phase, body = EXCLUDED.body, stored_at = EXCLUDED.stored_at
        """
    static let upsertKeyRecord = """
        INSERT INTO key_records(identity, intent_type, key, fingerprint, attempts, state, request, is_error, phase,
            body, ended_at)
        VALUES($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
        ON CONFLICT (identity, intent_type, key) DO UPDATE SET seq = nextval('journal_seq'),
            fingerprint = EXCLUDED.fingerprint, attempts = EXCLUDED.attempts, state = EXCLUDED.state,
            request = EXCLUDED.request, is_error = EXCLUDED.is_error, phase = EXCLUDED.phase, body = EXCLUDED.body,
            ended_at = EXCLUDED.ended_at
        """
    static let deleteKeyRecord = "DELETE FROM key_records WHERE identity = $1 AND intent_type = $2 AND key = $3"
    static let expireResults = "DELETE FROM results WHERE stored_at < $1"
    static let expireKeyRecords = "DELETE FROM key_records WHERE ended_at < $1"
    static let advanceNextID = "UPDATE meta SET value = $1 WHERE key = 'next_request_id' AND value < $1"
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
    static let selectListeners = "SELECT request, client, request_id, version FROM listeners ORDER BY seq"
    static let selectResults =
        "SELECT client, request_id, version, is_error, phase, body, stored_at FROM results ORDER BY seq"
    static let selectKeyRecords = """
        SELECT identity, intent_type, key, fingerprint, attempts, state, request, is_error, phase, body, ended_at
        FROM key_records ORDER BY seq
        """
    static let selectNextID = "SELECT value FROM meta WHERE key = 'next_request_id'"
}
