import IntentWire
import Testing

@testable import IntentBroker

/// The results kept for STATUS (bounded by count, time and bytes) and when the broker trims its heap.
@Suite struct ResultStoreTests {
    typealias Store = ResultStore<[UInt8]>
    static let second: UInt64 = 1_000_000_000

    static func key(_ id: Int) -> RequestKey { RequestKey(client: [0, 1, 2, 3, 4], id: Array("r\(id)".utf8)) }

    static func result(bytes: Int) -> Store.Result {
        Store.Result(isError: false, phase: "handle", payload: .body([UInt8](repeating: 120, count: bytes)))
    }

    @Test func aResultCostsItsBodyItsKeyAndAnEntry() {
        let cost = Store.cost(of: Self.result(bytes: 1000), for: Self.key(1))
        #expect(cost == 1000 + 5 + 2 + Store.entryOverhead)
        var store = Store(ttl: 60 * Self.second, capacity: 100)
        store.store(Self.result(bytes: 1000), for: Self.key(1), now: 0)
        #expect(store.bytes == cost)
        // Stored again under the same key: charged once.
        store.store(Self.result(bytes: 10), for: Self.key(1), now: 1)
        #expect(store.bytes == Store.cost(of: Self.result(bytes: 10), for: Self.key(1)))
    }

    @Test func pastTheByteBudgetTheOldestGoFirst() {
        let cost = Store.cost(of: Self.result(bytes: 1000), for: Self.key(1))
        var store = Store(ttl: 60 * Self.second, capacity: 100, byteBudget: 2 * cost + cost / 2)
        for id in 1...3 { store.store(Self.result(bytes: 1000), for: Self.key(id), now: UInt64(id)) }
        #expect(store.count == 2)
        #expect(store.result(for: Self.key(1)) == nil)
        #expect(store.result(for: Self.key(2)) != nil && store.result(for: Self.key(3)) != nil)
        #expect(store.bytes == 2 * cost)
    }

    @Test func expiryGivesTheBytesBack() {
        var store = Store(ttl: 10 * Self.second, capacity: 100)
        store.store(Self.result(bytes: 500), for: Self.key(1), now: 0)
        store.store(Self.result(bytes: 500), for: Self.key(2), now: 5 * Self.second)
        store.expire(now: 10 * Self.second)
        #expect(store.count == 1 && store.bytes == Store.cost(of: Self.result(bytes: 500), for: Self.key(2)))
        store.expire(now: 15 * Self.second)
        #expect(store.count == 0 && store.bytes == 0)
    }

    /// The store against a plain model (a dictionary and an order), over random stores, replacements, expiries and
    /// evictions by count and by bytes: every key's result, the count and the bytes agree after every step.
    @Test(arguments: [1, 2, 3, 4]) func theIndexAgreesWithAPlainModel(seed: UInt64) {
        var random = SplitMix(seed: seed)
        let ttl = 10 * Self.second
        let capacity = 40
        let budget = 30 * Store.cost(of: Self.result(bytes: 100), for: Self.key(10))
        var store = Store(ttl: ttl, capacity: capacity, byteBudget: budget)
        // The model: key id -> (body size, cost, expiry), and the ids oldest first.
        var model: [Int: (size: Int, cost: Int, expiry: UInt64)] = [:]
        var order: [Int] = []
        var now: UInt64 = 0
        for _ in 0..<4000 {
            now += random.next() % (Self.second / 4)
            if random.next() % 10 == 0 {
                store.expire(now: now)
                while let first = order.first, model[first]!.expiry <= now {
                    model[first] = nil
                    order.removeFirst()
                }
            } else {
                let id = Int(random.next() % 60)
                let size = 50 + Int(random.next() % 100)
                let cost = Store.cost(of: Self.result(bytes: size), for: Self.key(id))
                store.store(Self.result(bytes: size), for: Self.key(id), now: now)
                if model[id] != nil { order.removeAll { $0 == id } }
                model[id] = (size, cost, now + ttl)
                order.append(id)
                while model.count > capacity || model.values.reduce(0, { $0 + $1.cost }) > budget {
                    model[order.removeFirst()] = nil
                }
            }
            #expect(store.count == model.count)
            #expect(store.bytes == model.values.reduce(0) { $0 + $1.cost })
            for id in 0..<60 {
                let kept: Int?
                if case .body(let body)? = store.result(for: Self.key(id))?.payload {
                    kept = body.count
                } else {
                    kept = nil
                }
                #expect(kept == model[id]?.size, "key \(id)")
            }
        }
    }

    @Test func theHeapIsTrimmedOnceTheStateShrankToHalfItsPeak() {
        var trimmer = HeapTrimmer(minimumRelease: 1 << 20)
        func trim(_ bytes: Int) -> Bool { trimmer.shouldTrim(holding: bytes) }
        #expect(!trim(100 << 20))  // growing: never
        #expect(!trim(60 << 20))  // above half the peak: steady state
        #expect(trim(50 << 20))
        #expect(!trim(50 << 20))  // the peak starts again from what is held
        #expect(trim(10 << 20))
        #expect(!trim((10 << 20) - (1 << 19)))  // less than the least release
        #expect(trim(0))
    }
}
