import DequeModule

/// The broker's records of idempotency keys (design in `Docs/IDEMPOTENCY.md`): what a REQUEST carrying a
/// key already seen gets instead of a second job.
///
/// A record is scoped to the client's identity (its CURVE public key and the scope its routing id names, PROTOCOL.md
/// 3.4; one shared scope without either), the intent type and the key. It remembers a fingerprint of the first
/// request's body (a different body is a conflict), how many attempts ran, and its state: in flight (duplicates
/// attach to that request), completed (its final reply is replayed), or outcome unknown (a retry runs handle again,
/// as attempt n + 1, but never while an earlier attempt may still be running on a live worker).
///
/// Ended records are kept for `ttl` after they ended, at most `capacity` of them and `byteBudget` bytes (their
/// scopes plus what the caller says their reply costs); past a bound the oldest go first, and are counted in
/// ``evictedEarly``. Records in flight are never evicted (the broker's queue bounds bound them).
struct IdempotencyStore<Reply> {
    typealias Scope = IdempotencyScope

    enum State {
        /// An attempt is queued or running as this request.
        case inFlight(RequestID)
        /// The request ended with this final reply.
        case completed(Reply)
        /// The last attempt ended without a known outcome (worker lost during handle, hard limit, restart);
        /// `runningOn` is the live worker that may still be running it, if any.
        case outcomeUnknown(runningOn: WorkerID?)
    }

    struct Record {
        var state: State
        let fingerprint: BodyFingerprint
        var attempts: Int
        /// Bytes charged to the budget while the record has ended.
        var cost: Int
        /// Bumped each time the record ends, so that a stale entry of the expiry order is recognised.
        var generation: UInt64
    }

    /// What a REQUEST with a key gets.
    enum Admission: Equatable {
        /// Run it: a new key (attempt 1), or a retry after an unknown outcome (attempt n + 1).
        case run(attempt: Int)
        /// A duplicate of the request in flight: attach to it.
        case attach(RequestID)
        /// The key completed: replay its final reply.
        case replay
        /// The key was first used with another body.
        case conflict
        /// The outcome of the last attempt is unknown and it may still be running on a live worker.
        case earlierAttemptMayBeRunning
    }

    private(set) var records: [Scope: Record] = [:]
    private var order: Deque<(expiry: UInt64, scope: Scope, generation: UInt64)> = []
    private var nextGeneration: UInt64 = 1
    let ttl: UInt64
    let capacity: Int
    let byteBudget: Int
    /// Bytes held by ended records.
    private(set) var bytes = 0
    /// Ended records dropped before their time because a bound was reached.
    private(set) var evictedEarly = 0
    /// Ended records (the ones that count against the bounds).
    private(set) var endedCount = 0
    /// Records whose last attempt may still be running on a live worker (so that losing a worker scans only when
    /// there are some).
    private var unknownRunning = 0
    /// With a journal: the scopes whose record was created, changed in what the journal keeps (state,
    /// attempts) or removed since ``takeChanges()``. Which worker may run an attempt is not kept: after a restart no
    /// worker of the old broker runs anything for the new one.
    var tracksChanges = false
    private(set) var changed: Set<Scope> = []

    init(ttl: UInt64, capacity: Int, byteBudget: Int) {
        self.ttl = ttl
        self.capacity = capacity
        self.byteBudget = byteBudget
    }

    /// Decides what a REQUEST with `scope`'s key and a body with `fingerprint` gets; for `.run`, the record now
    /// says the key is in flight as `request`.
    mutating func admit(_ scope: Scope, fingerprint: BodyFingerprint, request: RequestID) -> Admission {
        guard var record = records[scope] else {
            note(scope)
            records[scope] = Record(
                state: .inFlight(request), fingerprint: fingerprint, attempts: 1, cost: 0, generation: 0)
            return .run(attempt: 1)
        }
        guard record.fingerprint == fingerprint else { return .conflict }
        switch record.state {
        case .inFlight(let first):
            return .attach(first)
        case .completed:
            return .replay
        case .outcomeUnknown(let worker) where worker != nil:
            return .earlierAttemptMayBeRunning
        case .outcomeUnknown:
            uncharge(&record)
            record.state = .inFlight(request)
            record.attempts += 1
            records[scope] = record
            note(scope)
            return .run(attempt: record.attempts)
        }
    }

    /// The final reply of the key's request, for a replay.
    func reply(for scope: Scope) -> Reply? {
        if case .completed(let reply)? = records[scope]?.state { return reply }
        return nil
    }

    /// The key's request ended with a final reply (or an error that is an outcome, e.g. a handler's failure),
    /// which costs `cost` bytes to keep.
    mutating func complete(_ scope: Scope, with reply: Reply, cost: Int, now: UInt64) {
        end(scope, .completed(reply), cost: cost, now: now)
    }

    /// The key's request ended without a known outcome; `runningOn` is the live worker that may still run it.
    mutating func outcomeUnknown(_ scope: Scope, runningOn worker: WorkerID?, now: UInt64) {
        end(scope, .outcomeUnknown(runningOn: worker), cost: 0, now: now)
    }

    /// The key's request ended before any attempt could have run (shed, refused, cancelled while queued): the key
    /// is as if never used, unless an earlier attempt's outcome is unknown.
    mutating func forget(_ scope: Scope, now: UInt64) {
        guard let record = records[scope] else { return }
        note(scope)
        if record.attempts > 1 {
            end(scope, .outcomeUnknown(runningOn: nil), cost: 0, now: now)
            records[scope]?.attempts -= 1
        } else {
            records.removeValue(forKey: scope)
        }
    }

    /// A worker is gone: attempts that may have been running on it no longer may.
    mutating func workerGone(_ worker: WorkerID) {
        guard unknownRunning > 0 else { return }
        for (scope, record) in records {
            if case .outcomeUnknown(let running) = record.state, running == worker {
                records[scope]?.state = .outcomeUnknown(runningOn: nil)
                unknownRunning -= 1
            }
        }
    }

    /// The worker answered the job of an attempt whose request had already ended: it no longer runs.
    mutating func attemptFinished(_ scope: IdempotencyScope, on worker: WorkerID) {
        if case .outcomeUnknown(let running)? = records[scope]?.state, running == worker {
            records[scope]?.state = .outcomeUnknown(runningOn: nil)
            unknownRunning -= 1
        }
    }

    /// Drops ended records whose time is up.
    mutating func expire(now: UInt64) {
        while let first = order.first, first.expiry <= now {
            order.removeFirst()
            drop(first.scope, generation: first.generation)
        }
    }

    private mutating func end(_ scope: Scope, _ state: State, cost: Int, now: UInt64) {
        guard var record = records[scope] else { return }
        note(scope)
        uncharge(&record)
        record.state = state
        record.cost = scope.cost + cost
        record.generation = nextGeneration
        nextGeneration &+= 1
        records[scope] = record
        if case .outcomeUnknown(let running) = state, running != nil { unknownRunning += 1 }
        bytes += record.cost
        endedCount += 1
        order.append((now + ttl, scope, record.generation))
        while endedCount > capacity || bytes > byteBudget, let oldest = order.popFirst() {
            if drop(oldest.scope, generation: oldest.generation) { evictedEarly += 1 }
        }
    }

    /// Removes the record if `generation` is still its current ended generation. Returns whether it did.
    @discardableResult
    private mutating func drop(_ scope: Scope, generation: UInt64) -> Bool {
        guard var record = records[scope], record.generation == generation, record.cost > 0 else { return false }
        uncharge(&record)
        records.removeValue(forKey: scope)
        note(scope)
        return true
    }

    /// Takes the scopes changed since the last call (see ``changed``).
    mutating func takeChanges() -> Set<Scope> {
        defer { changed.removeAll(keepingCapacity: true) }
        return changed
    }

    /// Puts back a record read from the journal: ended ones are charged (`cost`: what their reply costs to keep) and
    /// expire `ttl` after `endedAt` (monotonic, possibly in the past; restore them in that order); one in flight
    /// names the recovered request running it.
    mutating func restore(
        _ scope: Scope, state: State, fingerprint: BodyFingerprint, attempts: Int, cost: Int, endedAt: UInt64?
    ) {
        records[scope] = Record(
            state: .inFlight(0), fingerprint: fingerprint, attempts: attempts, cost: 0, generation: 0)
        switch state {
        case .inFlight:
            records[scope]?.state = state
        case .completed, .outcomeUnknown:
            let tracking = tracksChanges
            tracksChanges = false
            end(scope, state, cost: cost, now: endedAt ?? 0)
            tracksChanges = tracking
        }
    }

    private mutating func note(_ scope: Scope) {
        if tracksChanges { changed.insert(scope) }
    }

    /// Takes an ended record's bytes off the budget (it is in flight again, or going).
    private mutating func uncharge(_ record: inout Record) {
        if case .outcomeUnknown(let running) = record.state, running != nil { unknownRunning -= 1 }
        guard record.cost > 0 else { return }
        bytes -= record.cost
        endedCount -= 1
        record.cost = 0
        record.generation = 0
    }
}

/// What an idempotency key is scoped to: the client's identity, the intent type, the key.
struct IdempotencyScope: Hashable {
    let identity: [UInt8]
    let intentType: [UInt8]
    let key: [UInt8]

    /// Bytes a record of it costs, roughly.
    var cost: Int { identity.count + intentType.count + key.count + 64 }
}

/// A 128-bit fingerprint of a request body: two independent keyed mixes, so that a different body passes for the
/// same one with a chance of about 2⁻¹²⁸ (and never by a client's choice: the keys are secret and random, per
/// process, or per journal for a broker whose records outlive it: ``Seeds``).
struct BodyFingerprint: Hashable {
    /// The secret keys of the mixes.
    struct Seeds: Hashable {
        let first: UInt64
        let second: UInt64

        /// Fresh random keys.
        static func random() -> Seeds { Seeds(first: .random(in: .min ... .max), second: .random(in: .min ... .max)) }
    }

    let high: UInt64
    let low: UInt64

    init(_ bytes: UnsafeRawBufferPointer, seeds: Seeds = Self.processSeeds) {
        high = RequestKey.mix(bytes, seed: seeds.first)
        low = RequestKey.mix(bytes, seed: seeds.second)
    }

    init(_ bytes: [UInt8], seeds: Seeds = Self.processSeeds) {
        self = bytes.withUnsafeBytes { BodyFingerprint($0, seeds: seeds) }
    }

    /// Restores a fingerprint kept in a journal.
    init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    /// This process's keys (a broker without a journal).
    static let processSeeds = Seeds.random()
}
