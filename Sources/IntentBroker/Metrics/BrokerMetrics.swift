import CoreMetrics
import IntentWire

/// The broker's metrics (`Docs/OPERATIONS.md` lists them), kept through swift-metrics handles made by the factory in
/// ``BrokerConfiguration/metricsFactory``; a command serves them with swift-prometheus.
///
/// Counters and histograms are updated by the core on the loop's thread as things happen (a handle per label set,
/// made once and cached here: no factory call on the hot path). Gauges describe state and are set from a
/// ``BrokerSnapshot`` about once a second (``publish(_:)``).
///
/// Labels stay low-cardinality whatever peers send: intent types beyond ``maxLabelValues`` (the startup grace period
/// lets clients name types no worker serves) and worker names beyond it are counted under `other`.
final class BrokerMetrics {
    /// How many distinct intent types, and worker names, get labels of their own.
    static let maxLabelValues = 200

    private let factory: any MetricsFactory

    private struct RequestLabels: Hashable {
        var intent: String
        var phase: String
        var outcome: String
    }

    private struct JobLabels: Hashable {
        var worker: String
        var intent: String
        var phase: String
        var outcome: String
    }

    private struct PhaseLabels: Hashable {
        var intent: String
        var phase: String
    }

    private var requests: [RequestLabels: CoreMetrics.Counter] = [:]
    private var conversationsStarted: [String: CoreMetrics.Counter] = [:]
    private var conversationsEnded: [RequestLabels: CoreMetrics.Counter] = [:]
    private var conversationAsks: [PhaseLabels: CoreMetrics.Counter] = [:]
    private var conversationTurns: [String: CoreMetrics.Recorder] = [:]
    private var parameterNames: Set<String> = []
    private var forbiddenCounters: [PhaseLabels: CoreMetrics.Counter] = [:]
    private var identityNames: Set<String> = []
    private let conversationsOpen: Meter
    private var jobs: [JobLabels: CoreMetrics.Counter] = [:]
    private var handlerDurations: [PhaseLabels: CoreMetrics.Timer] = [:]
    private var workerNames: Set<String> = []
    /// Intent type labels by the core's type index (names are made once).
    private var intentLabels: [String?] = []
    private let firstReply: CoreMetrics.Timer
    private let finalReply: CoreMetrics.Timer
    private let progressReplies: CoreMetrics.Counter
    private let busy: CoreMetrics.Counter
    private let timeouts: CoreMetrics.Counter
    private let workersLost: CoreMetrics.Counter
    private let redispatches: CoreMetrics.Counter
    private let quarantined: CoreMetrics.Counter

    // Gauges (set by publish).
    private let inFlight: Meter
    private let queued: Meter
    private var queueDepth: [String: Meter] = [:]
    private var oldestAge: [String: Meter] = [:]
    private let workersByState: [String: Meter]
    /// Per registered worker (by name): jobs held now, and capacity; removed when the worker is gone.
    private var workerGauges: [String: (jobs: Meter, slots: Meter)] = [:]
    private let capacityByState: [String: Meter]

    init(factory: any MetricsFactory) {
        self.factory = factory
        firstReply = Timer(label: "concierge_first_reply_duration_seconds", factory: factory)
        finalReply = Timer(label: "concierge_final_reply_duration_seconds", factory: factory)
        progressReplies = Counter(label: "concierge_progress_replies_total", factory: factory)
        busy = Counter(label: "concierge_busy_total", factory: factory)
        timeouts = Counter(label: "concierge_timeouts_total", factory: factory)
        workersLost = Counter(label: "concierge_worker_lost_total", factory: factory)
        redispatches = Counter(label: "concierge_redispatches_total", factory: factory)
        quarantined = Counter(label: "concierge_requests_quarantined_total", factory: factory)
        inFlight = Meter(label: "concierge_requests_in_flight", factory: factory)
        queued = Meter(label: "concierge_requests_queued", factory: factory)
        conversationsOpen = Meter(label: "concierge_conversations_open", factory: factory)
        var workersByState: [String: Meter] = [:]
        for state in ["ready", "draining", "blocked"] {
            workersByState[state] = Meter(label: "concierge_workers", dimensions: [("state", state)], factory: factory)
        }
        self.workersByState = workersByState
        var capacityByState: [String: Meter] = [:]
        for state in ["used", "free"] {
            capacityByState[state] = Meter(
                label: "concierge_worker_capacity", dimensions: [("state", state)], factory: factory)
        }
        self.capacityByState = capacityByState
        for meter in Array(workersByState.values) + Array(capacityByState.values) + [inFlight, queued] {
            meter.set(0)
        }
    }

    /// A request got its ending (final or error), or was refused: `intent` is its type's label (see ``label(of:)``),
    /// `phase` the reply's phase, `outcome` `final` or the error's code. Durations are from its arrival, for a
    /// request the broker accepted (not for refusals or attached duplicates).
    func requestEnded(intent: String, phase: String, outcome: String, finalNanoseconds: UInt64?, firstReply: Bool) {
        let labels = RequestLabels(intent: intent, phase: phase, outcome: outcome)
        if let counter = requests[labels] {
            counter.increment()
        } else {
            let counter = Counter(
                label: "concierge_requests_total",
                dimensions: [("intent", intent), ("phase", phase), ("outcome", outcome)], factory: factory)
            requests[labels] = counter
            counter.increment()
        }
        if outcome == WireErrorCode.busy.rawValue { busy.increment() }
        if outcome == WireErrorCode.timeout.rawValue { timeouts.increment() }
        if let finalNanoseconds {
            finalReply.recordNanoseconds(Int64(clamping: finalNanoseconds))
            if firstReply { self.firstReply.recordNanoseconds(Int64(clamping: finalNanoseconds)) }
        }
    }

    /// A request's first reply was a progress reply, `nanoseconds` after its arrival (nil for an attached
    /// duplicate's).
    func progressSent(afterNanoseconds nanoseconds: UInt64?) {
        progressReplies.increment()
        if let nanoseconds { firstReply.recordNanoseconds(Int64(clamping: nanoseconds)) }
    }

    /// A worker answered a job (`outcome`: the RESULT's outcome word), or lost it (`lost`), `nanoseconds` after it
    /// was booked (the handler's run time as the broker sees it).
    func jobEnded(worker: String, intent: String, phase: String, outcome: String, nanoseconds: UInt64?) {
        let name = Self.bounded(worker, &workerNames)
        let labels = JobLabels(worker: name, intent: intent, phase: phase, outcome: outcome)
        if let counter = jobs[labels] {
            counter.increment()
        } else {
            let counter = Counter(
                label: "concierge_worker_jobs_total",
                dimensions: [("worker", name), ("intent", intent), ("phase", phase), ("outcome", outcome)],
                factory: factory)
            jobs[labels] = counter
            counter.increment()
        }
        guard let nanoseconds else { return }
        let phaseLabels = PhaseLabels(intent: intent, phase: phase)
        if let timer = handlerDurations[phaseLabels] {
            timer.recordNanoseconds(Int64(clamping: nanoseconds))
        } else {
            let timer = Timer(
                label: "concierge_handler_duration_seconds", dimensions: [("intent", intent), ("phase", phase)],
                factory: factory)
            handlerDurations[phaseLabels] = timer
            timer.recordNanoseconds(Int64(clamping: nanoseconds))
        }
    }

    /// The label of intent type `type` (an index below ``maxLabelValues``), made by `name` the first time.
    func intentLabel(_ type: Int, name: () -> String) -> String {
        if type < intentLabels.count, let label = intentLabels[type] { return label }
        if type >= intentLabels.count {
            intentLabels.append(contentsOf: repeatElement(nil, count: type + 1 - intentLabels.count))
        }
        let label = name()
        intentLabels[type] = label
        return label
    }

    func workerLost() { workersLost.increment() }
    func jobRedispatched() { redispatches.increment() }
    func requestQuarantined() { quarantined.increment() }

    /// A request (`kind` "send") or a registration ("serve") refused `forbidden` for `identity`; identities past
    /// ``maxLabelValues`` are counted under `other`.
    func forbidden(identity: String, kind: String) {
        let name = Self.bounded(identity, &identityNames)
        let labels = PhaseLabels(intent: name, phase: kind)
        let counter =
            forbiddenCounters[labels]
            ?? Counter(
                label: "concierge_forbidden_total", dimensions: [("identity", name), ("kind", kind)], factory: factory)
        forbiddenCounters[labels] = counter
        counter.increment()
    }

    /// A conversation's first turn counted (PROTOCOL.md 4.11).
    func conversationStarted(intent: String) {
        let counter =
            conversationsStarted[intent]
            ?? Counter(
                label: "concierge_conversations_started_total", dimensions: [("intent", intent)], factory: factory)
        conversationsStarted[intent] = counter
        counter.increment()
    }

    /// A conversation ended with `ending` after `turns` turns.
    func conversationEnded(intent: String, ending: String, turns: Int) {
        let labels = RequestLabels(intent: intent, phase: "", outcome: ending)
        let counter =
            conversationsEnded[labels]
            ?? Counter(
                label: "concierge_conversations_ended_total", dimensions: [("intent", intent), ("ending", ending)],
                factory: factory)
        conversationsEnded[labels] = counter
        counter.increment()
        let recorder =
            conversationTurns[intent]
            ?? Recorder(label: "concierge_conversation_turns", dimensions: [("intent", intent)], factory: factory)
        conversationTurns[intent] = recorder
        recorder.record(turns)
    }

    /// A conversation asked about `parameter` (a re-prompt from its second time on); parameter names past
    /// ``maxLabelValues`` are counted under `other`.
    func conversationAsked(intent: String, parameter: String) {
        let name = Self.bounded(parameter, &parameterNames)
        let labels = PhaseLabels(intent: intent, phase: name)
        let counter =
            conversationAsks[labels]
            ?? Counter(
                label: "concierge_conversation_asks_total", dimensions: [("intent", intent), ("parameter", name)],
                factory: factory)
        conversationAsks[labels] = counter
        counter.increment()
    }

    /// `value` as a label value: itself while fewer than ``maxLabelValues`` values are in `seen` (or it is one of
    /// them), else `other`, so that what peers send cannot grow a label without bound.
    private static func bounded(_ value: String, _ seen: inout Set<String>) -> String {
        if seen.contains(value) { return value }
        guard seen.count < maxLabelValues else { return "other" }
        seen.insert(value)
        return value
    }

    /// Sets the gauges from `snapshot`.
    func publish(_ snapshot: BrokerSnapshot) {
        inFlight.set(snapshot.requestsInFlight)
        conversationsOpen.set(snapshot.conversationsOpen)
        queued.set(snapshot.queued)
        workersByState["ready"]?.set(snapshot.readyWorkers)
        workersByState["draining"]?.set(snapshot.drainingWorkers)
        workersByState["blocked"]?.set(snapshot.blockedWorkers)
        capacityByState["used"]?.set(snapshot.capacityUsed)
        capacityByState["free"]?.set(snapshot.capacityFree)
        var seen: Set<String> = []
        for worker in snapshot.workers.prefix(Self.maxLabelValues) where seen.insert(worker.name).inserted {
            let gauges =
                workerGauges[worker.name]
                ?? (
                    Meter(
                        label: "concierge_worker_jobs_in_progress", dimensions: [("worker", worker.name)],
                        factory: factory),
                    Meter(label: "concierge_worker_slots", dimensions: [("worker", worker.name)], factory: factory)
                )
            workerGauges[worker.name] = gauges
            gauges.jobs.set(worker.jobs)
            gauges.slots.set(worker.capacity)
        }
        for (name, gauges) in workerGauges where !seen.contains(name) {
            gauges.jobs.destroy()
            gauges.slots.destroy()
            workerGauges[name] = nil
        }
        for (index, type) in snapshot.intentTypes.enumerated() where index < Self.maxLabelValues {
            // Types no worker serves and none queue for (made up by clients at startup) get no series.
            guard type.workers > 0 || type.queueDepth > 0 || queueDepth[type.name] != nil else { continue }
            gauge(&queueDepth, "concierge_queue_depth", type.name).set(type.queueDepth)
            gauge(&oldestAge, "concierge_queue_oldest_age_seconds", type.name).set(
                Double(type.oldestAgeNanoseconds) / 1e9)
        }
    }

    private func gauge(_ table: inout [String: Meter], _ label: String, _ intent: String) -> Meter {
        if let meter = table[intent] { return meter }
        let meter = Meter(label: label, dimensions: [("intent", intent)], factory: factory)
        table[intent] = meter
        return meter
    }
}
