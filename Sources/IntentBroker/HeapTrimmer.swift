#if canImport(Glibc)
    import Glibc
#endif

/// Gives the heap memory of expired results back to the system (back near idle once results expire).
///
/// glibc's malloc returns freed memory to the system only from the top of a heap; the results a busy minute left
/// are freed in the middle, among allocations that live on, so without `malloc_trim` the broker's RSS stays at its
/// peak after they expired. Trimming walks the free lists, so it is done only when what the broker holds shrank to
/// half of its peak since the last trim and by at least ``minimumRelease`` bytes: after a burst, not in a steady
/// state (where freed memory is used again at once).
struct HeapTrimmer {
    /// The least shrinkage worth a trim.
    let minimumRelease: Int
    private var peak = 0

    init(minimumRelease: Int = 1 << 20) {
        self.minimumRelease = minimumRelease
    }

    /// Whether to trim now that the broker holds `bytes` (results, idempotency records, requests); when it says
    /// yes, the peak starts again from `bytes`.
    mutating func shouldTrim(holding bytes: Int) -> Bool {
        if bytes >= peak {
            peak = bytes
            return false
        }
        guard peak - bytes >= minimumRelease, bytes <= peak / 2 else { return false }
        peak = bytes
        return true
    }

    /// Returns the free memory of every malloc arena to the system (`malloc_trim(0)`); nothing where glibc is not
    /// the allocator. `malloc_trim` is looked up at run time (rarely: once per trim): `<malloc.h>` is not part of
    /// Swift's Glibc module, and a C library without it (musl) simply has none.
    static func trim() {
        #if canImport(Glibc)
            guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim") else { return }
            _ = unsafeBitCast(symbol, to: (@convention(c) (Int) -> Int32).self)(0)
        #endif
    }
}

extension BrokerCore {
    /// What the broker's stores hold: the results and idempotency records kept (their own accounting). Requests in
    /// flight are left out: under overload their number swings with the queues, and a trim then would cost the
    /// loop time while the memory is used again at once.
    var heldBytes: Int { results.bytes + idempotency.bytes }
}
