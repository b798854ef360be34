import Testing

@testable import IntentBroker

/// ``ByteKey`` and ``RequestKey``: dictionary keys hashed once by a word-at-a-time digest (``DigestKeyed``).
@Suite struct DigestKeyedTests {
    /// Distinct byte strings of 0 to 40 bytes, many sharing their first 8 or 16 bytes and differing only in the rest
    /// (the digest's tail handling), seeded.
    static func distinctStrings(count: Int, seed: UInt64) -> [[UInt8]] {
        var generator = SplitMix(seed: seed)
        var seen = Set<[UInt8]>()
        var strings: [[UInt8]] = []
        let prefix = (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
        while strings.count < count {
            let length = Int.random(in: 0...40, using: &generator)
            var bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            if length >= 16, Bool.random(using: &generator) {
                bytes.replaceSubrange(0..<(Bool.random(using: &generator) ? 8 : 16), with: prefix.prefix(16))
                bytes = Array(bytes.prefix(length))
            }
            if seen.insert(bytes).inserted { strings.append(bytes) }
        }
        return strings
    }

    @Test func byteKeysFindTheirValuesAndOnlyThose() {
        let strings = Self.distinctStrings(count: 2_000, seed: 7)
        var table: [ByteKey: Int] = [:]
        for (index, bytes) in strings.enumerated() { table[ByteKey(bytes)] = index }
        #expect(table.count == strings.count)
        for (index, bytes) in strings.enumerated() {
            // A key made again from equal bytes (another array) finds the same entry.
            #expect(table[ByteKey(Array(bytes))] == index)
            #expect(ByteKey(Array(bytes)).hashValue == ByteKey(bytes).hashValue)
            guard !bytes.isEmpty else { continue }
            // One byte changed, anywhere: another key (unless that string is in the table too).
            for position in [0, bytes.count / 2, bytes.count - 1] {
                var changed = bytes
                changed[position] &+= 1
                #expect(table[ByteKey(changed)] == strings.firstIndex(of: changed))
            }
        }
    }

    @Test func digestsOfDistinctKeysDiffer() {
        // 64-bit digests of 2,000 distinct strings: a repeat would mean the digest ignores some of the bytes (for
        // example a tail shorter than a word), which would make lookups compare keys byte by byte far more often.
        let strings = Self.distinctStrings(count: 2_000, seed: 11)
        #expect(Set(strings.map { ByteKey($0).digest }).count == strings.count)
        let requests = strings.map { RequestKey(client: [0, 1, 2, 3, 4], id: $0) }
        #expect(Set(requests.map(\.digest)).count == strings.count)
        // The client's bytes count too: the same id from two clients.
        #expect(RequestKey(client: [1], id: [9]).digest != RequestKey(client: [2], id: [9]).digest)
        #expect(RequestKey(client: [1], id: [9]) != RequestKey(client: [2], id: [9]))
    }
}

extension SplitMix: RandomNumberGenerator {}
