import IntentJournal
import Testing

/// The SQLite journal against the memory journal, the reference of the semantics: random batches of every
/// operation kind (some invalid, so whole batches are rejected) give the same outcomes and the same recovered state,
/// before and after a reopen.
@Suite struct ModelTests {
    /// SplitMix64: a seeded generator, so a failure can be replayed from its seed.
    struct SeededGenerator: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    /// A random operation; ids and keys come from small ranges so that operations meet.
    static func operation(_ g: inout SeededGenerator, nextID: inout UInt64, now: Int64) -> JournalOperation {
        func bytes(_ prefix: String, _ range: ClosedRange<Int>) -> [UInt8] {
            Array("\(prefix)\(Int.random(in: range, using: &g))".utf8)
        }
        func key() -> JournalRequestKey {
            JournalRequestKey(
                client: bytes("c", 0...3), requestID: bytes("r", 0...20), version: UInt8.random(in: 1...2, using: &g))
        }
        func result() -> JournalResult {
            JournalResult(
                key: key(), isError: Bool.random(using: &g),
                phase: ["handle", "confirm", ""].randomElement(using: &g)!,
                body: Int.random(in: 0...3, using: &g) == 0 ? [] : bytes("body", 0...1000),
                storedAt: now - Int64.random(in: 0...100, using: &g))
        }
        func existingID() -> UInt64 { UInt64.random(in: (nextID > 8 ? nextID - 8 : 1)...nextID, using: &g) }
        func record() -> JournalKeyRecord {
            let state: JournalKeyRecord.State
            switch Int.random(in: 0...2, using: &g) {
            case 0: state = .inFlight(request: existingID())
            case 1: state = .completed(isError: Bool.random(using: &g), phase: "handle", body: bytes("b", 0...9))
            default: state = .outcomeUnknown
            }
            let ended: Int64? = Bool.random(using: &g) ? now - Int64.random(in: 0...100, using: &g) : nil
            return JournalKeyRecord(
                identity: bytes("id", 0...1), intentType: bytes("T", 0...1), key: bytes("k", 0...5),
                fingerprint: (0..<16).map { _ in UInt8.random(in: 0...255, using: &g) },
                attempts: Int.random(in: 1...4, using: &g), state: state, endedAt: ended)
        }
        switch Int.random(in: 0...99, using: &g) {
        case 0..<30:
            // Mostly a new id; sometimes an id that may be open (rejected then).
            let id = Int.random(in: 0...15, using: &g) == 0 ? existingID() : nextID
            if id == nextID { nextID += 1 }
            var request = JournalRequest(
                id: id, client: bytes("c", 0...3), requestID: bytes("r", 0...99), identity: bytes("id", 0...1),
                intentType: bytes("T", 0...1), phase: "lifecycle", body: bytes("body", 0...99),
                deadlineMilliseconds: Int.random(in: 0...10_000, using: &g), acceptedAt: now,
                idempotencyKey: Bool.random(using: &g) ? bytes("k", 0...5) : nil,
                attempt: Int.random(in: 1...3, using: &g), version: UInt8.random(in: 1...2, using: &g),
                handleDispatched: false, listeners: [])
            if Int.random(in: 0...4, using: &g) == 0 { request.listeners = [key()] }
            return .accepted(request)
        case 30..<40: return .attached(request: existingID(), key())
        case 40..<50: return .handleDispatched(request: existingID())
        case 50..<65:
            return .ended(request: existingID(), results: (0..<Int.random(in: 0...2, using: &g)).map { _ in result() })
        case 65..<72: return .stored([result(), result()])
        case 72..<86: return .keyRecord(record())
        case 86..<92:
            return .keyRemoved(identity: bytes("id", 0...1), intentType: bytes("T", 0...1), key: bytes("k", 0...5))
        case 92..<96: return .resultsExpired(storedBefore: now - Int64.random(in: 0...150, using: &g))
        default: return .keyRecordsExpired(endedBefore: now - Int64.random(in: 0...150, using: &g))
        }
    }

    /// `batch` with up to two conversation operations (writes and removals of a few conversations) inserted at random
    /// places. They come from a generator of their own, `c`, so that the other operations stay the ones each seed
    /// drew before conversations existed.
    static func withConversations(
        _ batch: [JournalOperation], _ c: inout SeededGenerator, now: Int64
    ) -> [JournalOperation] {
        var batch = batch
        for _ in 0..<Int.random(in: 0...2, using: &c) {
            let scope = Array("s\(Int.random(in: 0...1, using: &c))".utf8)
            let id = Array("v\(Int.random(in: 0...4, using: &c))".utf8)
            let operation: JournalOperation =
                Int.random(in: 0...2, using: &c) == 0
                ? .conversationRemoved(scope: scope, id: id)
                : .conversation(
                    JournalConversation(
                        scope: scope, id: id, state: Array("{\"turn\":\(Int.random(in: 1...9, using: &c))}".utf8),
                        updatedAt: now))
            batch.insert(operation, at: Int.random(in: 0...batch.count, using: &c))
        }
        return batch
    }

    @Test(arguments: [1, 2, 3, 4] as [UInt64])
    func randomBatchesGiveTheSameStateAsTheReference(seed: UInt64) throws {
        let directory = try TemporaryDirectory()
        let path = try directory.journal()
        var journal = try SQLiteJournal(path: path, sync: seed % 2 == 0 ? .everyCommit : .interval(.milliseconds(5)))
        let model = MemoryJournal()
        var g = SeededGenerator(state: seed)
        var c = SeededGenerator(state: seed &+ 1_000)
        var nextID: UInt64 = 1
        var rejected = 0
        for round in 0..<300 {
            let now = 1_000 + Int64(round)
            let drawn = (0..<Int.random(in: 0...6, using: &g)).map { _ in
                Self.operation(&g, nextID: &nextID, now: now)
            }
            let batch = Self.withConversations(drawn, &c, now: now)
            var sqliteError: JournalError?
            var modelError: JournalError?
            do { try journal.commit(batch) } catch { sqliteError = error }
            do { try model.commit(batch) } catch { modelError = error }
            #expect(sqliteError?.code == modelError?.code, "seed \(seed) round \(round): \(batch)")
            if sqliteError != nil { rejected += 1 }
            if round % 50 == 49 {
                #expect(try journal.recover() == (try model.recover()), "seed \(seed) round \(round)")
                journal.close()
                journal = try SQLiteJournal(path: path)
            }
        }
        #expect(try journal.recover() == (try model.recover()))
        #expect(rejected > 5)  // the rejected batches were exercised
        let state = try model.recover()
        #expect(state.requests.count > 5 && state.results.count > 5 && state.keyRecords.count > 3)
        #expect(state.conversations.count > 2)
        journal.close()
    }
}
