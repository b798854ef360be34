import IntentWire
import Testing

@testable import IntentBroker

/// The records behind idempotency keys, without the broker around them.
@Suite struct IdempotencyStoreTests {
    typealias Store = IdempotencyStore<String>
    static let pay = Store.Scope(identity: Array("alice".utf8), intentType: Array("SendPayment".utf8), key: [1, 2])
    static let body = BodyFingerprint(Array(#"{"intent":{"amount":5}}"#.utf8))
    static let otherBody = BodyFingerprint(Array(#"{"intent":{"amount":50}}"#.utf8))
    static let second: UInt64 = 1_000_000_000

    func store(ttl: UInt64 = 60 * second, capacity: Int = 100, bytes: Int = 1 << 20) -> Store {
        Store(ttl: ttl, capacity: capacity, byteBudget: bytes)
    }

    @Test func aDuplicateInFlightAttachesToTheFirstRequest() {
        var records = store()
        #expect(records.admit(Self.pay, fingerprint: Self.body, request: 7) == .run(attempt: 1))
        #expect(records.admit(Self.pay, fingerprint: Self.body, request: 8) == .attach(7))
    }

    @Test func aCompletedKeyIsReplayedAndADifferentBodyIsAConflict() {
        var records = store()
        _ = records.admit(Self.pay, fingerprint: Self.body, request: 7)
        records.complete(Self.pay, with: "paid", cost: 4, now: 0)
        #expect(records.admit(Self.pay, fingerprint: Self.body, request: 9) == .replay)
        #expect(records.reply(for: Self.pay) == "paid")
        #expect(records.admit(Self.pay, fingerprint: Self.otherBody, request: 10) == .conflict)
        // In flight too: another body never attaches.
        let fresh = Store.Scope(identity: Self.pay.identity, intentType: Self.pay.intentType, key: [9])
        _ = records.admit(fresh, fingerprint: Self.body, request: 11)
        #expect(records.admit(fresh, fingerprint: Self.otherBody, request: 12) == .conflict)
    }

    @Test func keysAreScopedByIdentityAndIntentType() {
        var records = store()
        _ = records.admit(Self.pay, fingerprint: Self.body, request: 7)
        let bob = Store.Scope(identity: Array("bob".utf8), intentType: Self.pay.intentType, key: Self.pay.key)
        let ride = Store.Scope(identity: Self.pay.identity, intentType: Array("RequestRide".utf8), key: Self.pay.key)
        #expect(records.admit(bob, fingerprint: Self.body, request: 8) == .run(attempt: 1))
        #expect(records.admit(ride, fingerprint: Self.body, request: 9) == .run(attempt: 1))
    }

    @Test func anUnknownOutcomeIsRetriedOnlyOnceNoEarlierAttemptCanStillRun() {
        var records = store()
        _ = records.admit(Self.pay, fingerprint: Self.body, request: 7)
        // The hard limit ended it while worker 3 still runs the job.
        records.outcomeUnknown(Self.pay, runningOn: 3, now: 0)
        #expect(records.admit(Self.pay, fingerprint: Self.body, request: 8) == .earlierAttemptMayBeRunning)
        records.workerGone(4)  // another worker: changes nothing
        #expect(records.admit(Self.pay, fingerprint: Self.body, request: 8) == .earlierAttemptMayBeRunning)
        records.workerGone(3)
        #expect(records.admit(Self.pay, fingerprint: Self.body, request: 8) == .run(attempt: 2))
        // Lost with its worker: retried at once, as attempt 3.
        records.outcomeUnknown(Self.pay, runningOn: nil, now: 0)
        #expect(records.admit(Self.pay, fingerprint: Self.body, request: 9) == .run(attempt: 3))
        records.complete(Self.pay, with: "paid", cost: 4, now: 0)
        #expect(records.admit(Self.pay, fingerprint: Self.body, request: 10) == .replay)
    }

    @Test func aRequestThatNeverRanLeavesTheKeyAsIfUnused() {
        var records = store()
        _ = records.admit(Self.pay, fingerprint: Self.body, request: 7)
        records.forget(Self.pay, now: 0)  // shed with busy before any worker saw it
        #expect(records.admit(Self.pay, fingerprint: Self.otherBody, request: 8) == .run(attempt: 1))
        // A retry after an unknown outcome that is shed again stays unknown, with the attempts that may have run.
        records.outcomeUnknown(Self.pay, runningOn: nil, now: 0)
        #expect(records.admit(Self.pay, fingerprint: Self.otherBody, request: 9) == .run(attempt: 2))
        records.forget(Self.pay, now: 0)
        #expect(records.admit(Self.pay, fingerprint: Self.otherBody, request: 10) == .run(attempt: 2))
    }

    @Test func endedRecordsExpireAfterTheirTimeAndRecordsInFlightNever() {
        var records = store(ttl: 10 * Self.second)
        let other = Store.Scope(identity: [], intentType: Self.pay.intentType, key: [3])
        _ = records.admit(Self.pay, fingerprint: Self.body, request: 7)
        _ = records.admit(other, fingerprint: Self.body, request: 8)
        records.complete(Self.pay, with: "paid", cost: 4, now: 0)
        records.expire(now: 9 * Self.second)
        #expect(records.admit(Self.pay, fingerprint: Self.body, request: 9) == .replay)
        records.expire(now: 10 * Self.second)
        #expect(records.admit(Self.pay, fingerprint: Self.body, request: 10) == .run(attempt: 1))
        records.expire(now: 1000 * Self.second)
        #expect(records.admit(other, fingerprint: Self.body, request: 11) == .attach(8))
        #expect(records.evictedEarly == 0)
    }

    @Test func boundsEvictTheOldestEndedRecordsAndCountThem() {
        var records = store(capacity: 3, bytes: 1 << 20)
        for index in 0..<5 {
            let scope = Store.Scope(identity: [], intentType: [1], key: [UInt8(index)])
            _ = records.admit(scope, fingerprint: Self.body, request: UInt64(index))
            records.complete(scope, with: "r\(index)", cost: 10, now: UInt64(index))
        }
        #expect(records.endedCount == 3)
        #expect(records.evictedEarly == 2)
        #expect(records.reply(for: .init(identity: [], intentType: [1], key: [0])) == nil)
        #expect(records.reply(for: .init(identity: [], intentType: [1], key: [4])) == "r4")
        // The byte budget: a reply bigger than what is left pushes the oldest out.
        var small = store(capacity: 100, bytes: 1000)
        for index in 0..<3 {
            let scope = Store.Scope(identity: [], intentType: [1], key: [UInt8(index)])
            _ = small.admit(scope, fingerprint: Self.body, request: UInt64(index))
            small.complete(scope, with: "r\(index)", cost: 400, now: 0)
        }
        #expect(small.bytes <= 1000)
        #expect(small.evictedEarly == 1)
    }

    @Test func aRetriedRecordIsNotDroppedByItsOldExpiry() {
        var records = store(ttl: 10 * Self.second)
        _ = records.admit(Self.pay, fingerprint: Self.body, request: 7)
        records.outcomeUnknown(Self.pay, runningOn: nil, now: 0)
        #expect(records.admit(Self.pay, fingerprint: Self.body, request: 8) == .run(attempt: 2))
        records.expire(now: 20 * Self.second)  // the first ending's expiry: the record is in flight again
        #expect(records.admit(Self.pay, fingerprint: Self.body, request: 9) == .attach(8))
        #expect(records.bytes == 0 && records.endedCount == 0)
    }

    @Test func fingerprintsTellBodiesApart() {
        #expect(BodyFingerprint(Array("a".utf8)) == BodyFingerprint(Array("a".utf8)))
        #expect(BodyFingerprint(Array("a".utf8)) != BodyFingerprint(Array("b".utf8)))
        #expect(BodyFingerprint([]) != BodyFingerprint([0]))
    }
}
