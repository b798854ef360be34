/// Client-side adaptive throttling: a client that sees the broker refuse many of its requests with `busy` refuses a
/// share of new requests itself, without sending them (the adaptive throttling of Google's SRE book, chapter 21,
/// "Handling Overload").
///
/// Over the last ``Configuration/window``, the throttle counts `requests`, the requests whose fate is known (answered
/// by the broker, or refused here), and `accepts`, those the broker took (its first reply was not the error `busy`).
/// A new request is refused here with probability
///
///     max(0, (requests − multiplier × accepts) / (requests + 1))
///
/// so that a client offering more than the broker takes sends about `multiplier` times what it takes, and refuses
/// the rest for nothing: no frames, no broker time, no `busy` reply to receive. While the broker refuses nothing the
/// probability is 0. Requests still in flight are not counted, so a burst at the start cannot look like refusals.
///
/// Refusals are spread evenly rather than drawn at random: each request adds the probability to a credit, and a
/// request is refused when the credit reaches 1, so that a run of calls refuses exactly the expected share.
///
/// Keep one throttle per intent type: the broker sheds per type (PROTOCOL.md 6.3), and one overloaded type must
/// not throttle the others.
///
/// ```swift
/// var throttle = AdaptiveThrottle(configuration: .init(multiplier: 1.1))
/// if throttle.admit(now: MonotonicTime.now()) { send() } else { failLocally() }
/// // ... when the first reply comes:
/// throttle.record(accepted: reply.errorCode != "busy", now: MonotonicTime.now())
/// ```
public struct AdaptiveThrottle: Sendable {
    /// How hard a throttle pushes back.
    public struct Configuration: Sendable, Hashable {
        /// K: the client sends at most about K times the requests the broker accepts. The SRE book's default is 2;
        /// lower values shed more of the excess here (1.1: a tenth more than the broker takes). At least 1.
        public var multiplier: Double
        /// How far back requests are counted. Longer windows react as fast (the ratio counts, not the totals) but
        /// forget an overload later.
        public var window: Duration

        /// A configuration; throws ``AdaptiveThrottle/ConfigurationError`` for a multiplier below 1 (or not finite)
        /// or a window outside 100 ms to 10 minutes.
        public init(multiplier: Double = 2, window: Duration = .seconds(10)) throws(ConfigurationError) {
            guard multiplier.isFinite, multiplier >= 1, multiplier <= 1000 else {
                throw ConfigurationError(message: "the throttle's multiplier must be 1 to 1000")
            }
            guard window >= .milliseconds(100), window <= .seconds(600) else {
                throw ConfigurationError(message: "the throttle's window must be 100 ms to 10 minutes")
            }
            self.multiplier = multiplier
            self.window = window
        }
    }

    /// A configuration out of range.
    public struct ConfigurationError: Error, Sendable, Hashable, CustomStringConvertible {
        public let message: String
        public var description: String { message }
    }

    /// The window is kept as this many buckets; the oldest is dropped as time moves on.
    static let bucketCount = 10

    public let configuration: Configuration
    private let bucketNanos: UInt64
    /// Per bucket: requests whose fate is known, and requests the broker accepted.
    private var requests = [Int](repeating: 0, count: bucketCount)
    private var accepts = [Int](repeating: 0, count: bucketCount)
    /// The bucket `now / bucketNanos` that `current` holds.
    private var currentBucket: UInt64 = 0
    private var current = 0
    private var totalRequests = 0
    private var totalAccepts = 0
    private var credit = 0.0
    /// Requests refused here since the throttle was made.
    public private(set) var refused = 0

    public init(configuration: Configuration) {
        self.configuration = configuration
        let nanos =
            configuration.window.components.seconds * 1_000_000_000
            + configuration.window.components.attoseconds / 1_000_000_000
        bucketNanos = UInt64(max(1, nanos / Int64(Self.bucketCount)))
    }

    /// The share of new requests refused here now (0 while the broker accepts what is sent).
    public mutating func refusalProbability(now: UInt64) -> Double {
        advance(to: now)
        let excess = Double(totalRequests) - configuration.multiplier * Double(totalAccepts)
        return max(0, excess / Double(totalRequests + 1))
    }

    /// Whether to send a new request now. A refused request is counted at once (its fate is known); an admitted one
    /// is counted when ``record(accepted:now:)`` says what the broker did with it.
    public mutating func admit(now: UInt64) -> Bool {
        let probability = refusalProbability(now: now)
        guard probability > 0 else {
            credit = 0
            return true
        }
        credit += probability
        guard credit >= 1 else { return true }
        credit -= 1
        refused += 1
        count(accepted: false)
        return false
    }

    /// The broker answered a request this throttle admitted: `accepted` unless its first reply was the error `busy`.
    public mutating func record(accepted: Bool, now: UInt64) {
        advance(to: now)
        count(accepted: accepted)
    }

    private mutating func count(accepted: Bool) {
        requests[current] += 1
        totalRequests += 1
        if accepted {
            accepts[current] += 1
            totalAccepts += 1
        }
    }

    /// Drops the buckets older than the window.
    private mutating func advance(to now: UInt64) {
        let bucket = now / bucketNanos
        guard bucket > currentBucket else { return }
        let steps = min(bucket - currentBucket, UInt64(Self.bucketCount))
        for _ in 0..<steps {
            current = (current + 1) % Self.bucketCount
            totalRequests -= requests[current]
            totalAccepts -= accepts[current]
            requests[current] = 0
            accepts[current] = 0
        }
        currentBucket = bucket
    }
}
