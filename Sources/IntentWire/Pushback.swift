/// A broker's pushback, heeded by a client: when the broker refuses a request with `busy` because its intent type
/// is overloaded, the refusal says how many requests of that type per second it expects to take from this client
/// (`pushback_rate`) and for how long (`pushback_ms`) (PROTOCOL.md 6.3, rule 2). Meanwhile a client that heeds it
/// sends at most that rate and refuses the rest itself, unsent: no frames, no broker time, no `busy` reply to
/// receive. That is where shedding is cheapest; the broker's own refusals still cost the client a send and a receive
/// and the broker a receive, a check and a reply, on the same cores as the workers (`Docs/OVERLOAD.md`).
///
/// The rate is a token bucket with a burst of a hundredth of a second's worth (at least one request). When the
/// hint's time is up the client sends everything again, so a broker that has caught up (more workers, less load)
/// gets the whole load at once; while it is still overloaded it refuses again, with a fresh hint. The broker's rate
/// is its measured pace split among the clients waiting, with a little more than their share so that its queue stays
/// fed; so a client that heeds its hint is seldom refused.
///
/// Keep one per intent type and connection: the broker sheds per type, and shares its pace among connections.
///
/// ```swift
/// var pushback = Pushback()
/// if pushback.admit(now: MonotonicTime.now()) { send() } else { failLocally() }
/// // ... when a reply is the error busy:
/// if let hint = Pushback.Hint(errorBody: body) { pushback.heed(hint, now: MonotonicTime.now()) }
/// ```
public struct Pushback: Sendable, Hashable {
    /// What a `busy` refusal asks of the client.
    public struct Hint: Sendable, Hashable {
        /// Requests of the intent type per second the broker expects to take from this client (at least 1).
        public var rate: Int
        /// How long the hint holds, in milliseconds.
        public var milliseconds: Int

        public init(rate: Int, milliseconds: Int) {
            self.rate = rate
            self.milliseconds = milliseconds
        }

        /// The hint in an error body (`"pushback_rate"` and `"pushback_ms"`, both positive integers), or nil when
        /// the body has none. Reads the two members without parsing the body.
        public init?(errorBody body: UnsafeRawBufferPointer) {
            guard let rate = Self.integer(named: #""pushback_rate":"#, in: body), rate > 0,
                let milliseconds = Self.integer(named: #""pushback_ms":"#, in: body), milliseconds > 0
            else { return nil }
            self.init(rate: rate, milliseconds: milliseconds)
        }

        /// The hint in an error body given as bytes.
        public init?(errorBody body: [UInt8]) {
            guard let hint = body.withUnsafeBytes({ Hint(errorBody: $0) }) else { return nil }
            self = hint
        }

        /// The decimal digits (at most 9) right after `key` in `body`.
        static func integer(named key: StaticString, in body: UnsafeRawBufferPointer) -> Int? {
            let keyBytes = UnsafeRawBufferPointer(start: key.utf8Start, count: key.utf8CodeUnitCount)
            guard body.count > keyBytes.count else { return nil }
            var start = 0
            while start + keyBytes.count < body.count {
                var matched = 0
                while matched < keyBytes.count, body[start + matched] == keyBytes[matched] { matched += 1 }
                if matched == keyBytes.count {
                    var index = start + keyBytes.count
                    var value = 0
                    var digits = 0
                    while index < body.count, digits < 9, body[index] >= 0x30, body[index] <= 0x39 {
                        value = value * 10 + Int(body[index] - 0x30)
                        index += 1
                        digits += 1
                    }
                    return digits > 0 ? value : nil
                }
                start += 1
            }
            return nil
        }
    }

    /// The rate in force (requests per second), 0 when no hint was heeded yet.
    public private(set) var rate: Double = 0
    /// Until when (monotonic nanoseconds) the rate holds.
    public private(set) var until: UInt64 = 0
    private var tokens: Double = 0
    private var refilledAt: UInt64 = 0
    /// Requests refused here since the pushback was made.
    public private(set) var refused = 0

    public init() {}

    /// Whether the last hint still holds at `now`.
    public func isActive(now: UInt64) -> Bool { now < until }

    /// The burst the bucket holds at `rate`: a hundredth of a second's worth, at least one request.
    static func burst(_ rate: Double) -> Double { max(1, rate / 100) }

    /// Takes a refusal's hint: from `now`, at most `hint.rate` requests per second for `hint.milliseconds` (at most
    /// ``longestHold``). A hint
    /// that comes while another holds changes the rate and extends the time, and keeps the tokens gathered so far
    /// (up to the new burst); a first hint starts with a full burst.
    public mutating func heed(_ hint: Hint, now: UInt64) {
        let newRate = Double(max(1, hint.rate))
        if isActive(now: now) {
            refill(now: now)
            tokens = min(tokens, Self.burst(newRate))
        } else {
            tokens = Self.burst(newRate)
            refilledAt = now
        }
        rate = newRate
        until = now &+ UInt64(min(max(1, hint.milliseconds), Self.longestHold)) &* 1_000_000
    }

    /// The longest a hint is heeded, in milliseconds, whatever it says: a broker's mistake (or a 9-digit
    /// `pushback_ms`, about 11 days) must not silence a client for longer than a minute.
    public static let longestHold = 60_000

    /// Whether to send a new request now: always while no hint holds; else when the bucket has a token.
    public mutating func admit(now: UInt64) -> Bool {
        guard isActive(now: now) else { return true }
        refill(now: now)
        if tokens >= 1 {
            tokens -= 1
            return true
        }
        refused += 1
        return false
    }

    private mutating func refill(now: UInt64) {
        guard now > refilledAt else { return }
        tokens = min(Self.burst(rate), tokens + Double(now - refilledAt) * rate / 1e9)
        refilledAt = now
    }
}
