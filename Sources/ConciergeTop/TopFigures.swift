/// The figures `concierge top` shows, computed from two scrapes of a broker's `/metrics`: gauges from the current one,
/// rates and quantiles from what changed since the previous one (`elapsed` seconds earlier), as PromQL's `rate` and
/// `histogram_quantile` over that interval would give them.
public struct TopFigures: Sendable, Equatable {
    /// One intent type: its queue now, what ended in the interval, and what ended since the broker started.
    public struct Intent: Sendable, Equatable {
        public var name: String
        public var queueDepth: Double
        public var oldestAgeSeconds: Double
        /// Requests per second that ended in the interval, by outcome: `final`, `busy`, other errors (nil without a
        /// previous scrape).
        public var finalRate: Double?
        public var busyRate: Double?
        public var errorRate: Double?
        /// The p99 of handler run time (all phases) over the interval, nil when no job ended in it.
        public var handlerP99: Double?
        /// Requests that ended since the broker started, by outcome.
        public var finals: Double
        public var busy: Double
        public var errors: Double
    }

    /// One registered worker: jobs it holds, its capacity, and jobs it ended per second in the interval.
    public struct Worker: Sendable, Equatable {
        public var name: String
        public var jobs: Double
        public var slots: Double
        public var jobRate: Double?
        public var jobsTotal: Double
    }

    public var requestsInFlight: Double?
    public var requestsQueued: Double?
    public var workersReady: Double?
    public var workersDraining: Double?
    public var workersBlocked: Double?
    public var capacityUsed: Double?
    public var capacityFree: Double?
    public var intents: [Intent] = []
    public var workers: [Worker] = []
    /// p99 of first and final reply times over the interval (nil when no reply of that kind was sent in it).
    public var firstReplyP99: Double?
    public var finalReplyP99: Double?
    /// How many requests got their final reply in the interval.
    public var finalRepliesInInterval: Double?
    /// Since the broker started.
    public var totalFinals: Double = 0
    public var totalBusy: Double = 0
    public var totalErrors: Double = 0
    public var totalTimeouts: Double?
    public var totalWorkersLost: Double?
    public var totalRedispatches: Double?
    /// The journal, when the broker has one: whether it is available (1/0) and its commit p99 over the interval.
    public var journalAvailable: Double?
    public var journalCommitP99: Double?
    public var hasJournal = false
    /// Conversations (PROTOCOL.md 4.11): open now, started, and ended by ending (every intent type together).
    public var conversationsOpen: Double?
    public var conversationsStarted: Double = 0
    public var conversationEndings: [Count] = []
    /// Turns per ended conversation, on average; nil before one ended.
    public var turnsPerConversation: Double?
    /// The parameters asked most often (`intent.parameter`), most first, at most three.
    public var mostAsked: [Count] = []

    /// A name and how many (an ending, an asked parameter).
    public struct Count: Equatable, Sendable {
        public var name: String
        public var count: Double
    }
    /// The seconds between the two scrapes (nil for the first).
    public var elapsed: Double?

    public init() {}

    /// The figures of `current`, with rates and quantiles over the `elapsed` seconds since `previous`.
    public init(previous: MetricsScrape?, current: MetricsScrape, elapsed: Double) {
        let interval = previous != nil && elapsed > 0 ? elapsed : nil
        self.elapsed = interval
        let earlier = interval == nil ? nil : previous
        requestsInFlight = current.value("concierge_requests_in_flight")
        requestsQueued = current.value("concierge_requests_queued")
        workersReady = current.value("concierge_workers", ["state": "ready"])
        workersDraining = current.value("concierge_workers", ["state": "draining"])
        workersBlocked = current.value("concierge_workers", ["state": "blocked"])
        capacityUsed = current.value("concierge_worker_capacity", ["state": "used"])
        capacityFree = current.value("concierge_worker_capacity", ["state": "free"])

        func rate(_ name: String, _ matching: ([String: String]) -> Bool) -> Double? {
            guard let interval else { return nil }
            return Self.increase(name, previous: earlier, current: current, matching) / interval
        }
        func p99(_ name: String, _ labels: [String: String] = [:]) -> Double? {
            guard earlier != nil else { return nil }
            return HistogramQuantile.quantile(
                0.99, of: HistogramQuantile.bucketDeltas(name, labels, previous: earlier, current: current))
        }
        func outcome(_ labels: [String: String]) -> String { labels["outcome"] ?? "" }

        // Intent types: those with a queue gauge and those with requests counted.
        var intentNames = Set(current.samples(named: "concierge_queue_depth").compactMap { $0.labels["intent"] })
        for sample in current.samples(named: "concierge_requests_total") {
            if let name = sample.labels["intent"] { intentNames.insert(name) }
        }
        let requests = current.samples(named: "concierge_requests_total")
        for name in intentNames.sorted() {
            let mine = requests.filter { $0.labels["intent"] == name }
            let finals = mine.filter { outcome($0.labels) == "final" }.reduce(0) { $0 + $1.value }
            let busy = mine.filter { outcome($0.labels) == "busy" }.reduce(0) { $0 + $1.value }
            let all = mine.reduce(0) { $0 + $1.value }
            intents.append(
                Intent(
                    name: name, queueDepth: current.value("concierge_queue_depth", ["intent": name]) ?? 0,
                    oldestAgeSeconds: current.value("concierge_queue_oldest_age_seconds", ["intent": name]) ?? 0,
                    finalRate: rate("concierge_requests_total") { $0["intent"] == name && outcome($0) == "final" },
                    busyRate: rate("concierge_requests_total") { $0["intent"] == name && outcome($0) == "busy" },
                    errorRate: rate("concierge_requests_total") {
                        $0["intent"] == name && outcome($0) != "final" && outcome($0) != "busy"
                    },
                    handlerP99: p99("concierge_handler_duration_seconds", ["intent": name]),
                    finals: finals, busy: busy, errors: all - finals - busy))
            totalFinals += finals
            totalBusy += busy
            totalErrors += all - finals - busy
        }

        for sample in current.samples(named: "concierge_worker_slots") {
            guard let name = sample.labels["worker"] else { continue }
            workers.append(
                Worker(
                    name: name, jobs: current.value("concierge_worker_jobs_in_progress", ["worker": name]) ?? 0,
                    slots: sample.value, jobRate: rate("concierge_worker_jobs_total") { $0["worker"] == name },
                    jobsTotal: current.sum("concierge_worker_jobs_total", ["worker": name])))
        }
        workers.sort { $0.name < $1.name }

        firstReplyP99 = p99("concierge_first_reply_duration_seconds")
        finalReplyP99 = p99("concierge_final_reply_duration_seconds")
        if interval != nil {
            finalRepliesInInterval = Self.increase(
                "concierge_final_reply_duration_seconds_count", previous: earlier, current: current, { _ in true })
        }
        totalTimeouts = current.value("concierge_timeouts_total")
        totalWorkersLost = current.value("concierge_worker_lost_total")
        totalRedispatches = current.value("concierge_redispatches_total")
        journalAvailable = current.value("concierge_journal_available")
        hasJournal = journalAvailable != nil || current.contains("concierge_journal_commit_duration_seconds_count")
        journalCommitP99 = p99("concierge_journal_commit_duration_seconds")
        conversationsOpen = current.value("concierge_conversations_open")
        conversationsStarted = current.sum("concierge_conversations_started_total")
        var endings: [String: Double] = [:]
        for sample in current.samples(named: "concierge_conversations_ended_total") {
            endings[sample.labels["ending"] ?? "", default: 0] += sample.value
        }
        conversationEndings = endings.sorted { ($0.value, $1.key) > ($1.value, $0.key) }.map {
            Count(name: $0.key, count: $0.value)
        }
        let turns = current.sum("concierge_conversation_turns_count")
        if turns > 0 { turnsPerConversation = current.sum("concierge_conversation_turns_sum") / turns }
        mostAsked = current.samples(named: "concierge_conversation_asks_total")
            .map { ("\($0.labels["intent"] ?? "").\($0.labels["parameter"] ?? "")", $0.value) }
            .sorted { ($0.1, $1.0) > ($1.1, $0.0) }.prefix(3).map { Count(name: $0.0, count: $0.1) }
    }

    /// How much counter `name` grew between the scrapes, over its series whose labels satisfy `matching`. A series new
    /// in `current` grew from 0; one that fell (the broker restarted) grew by its current value.
    static func increase(
        _ name: String, previous: MetricsScrape?, current: MetricsScrape, _ matching: ([String: String]) -> Bool
    ) -> Double {
        var before: [[String: String]: Double] = [:]
        for sample in previous?.samples(named: name) ?? [] where matching(sample.labels) {
            before[sample.labels, default: 0] += sample.value
        }
        var total = 0.0
        for sample in current.samples(named: name) where matching(sample.labels) {
            let old = before[sample.labels] ?? 0
            total += sample.value >= old ? sample.value - old : sample.value
        }
        return total
    }
}
