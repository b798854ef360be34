import IntentWire

/// Everything the broker keeps for one intent type (compare `service_t` in the ZeroMQ guide's `mdbroker.c`).
struct IntentTypeState {
    /// The type's name as it appears in frames.
    let name: [UInt8]
    /// Registered workers that serve the type (draining ones included: they still serve it, section 8.1).
    var workers: [WorkerID] = []
    /// The definitions its `CIPW04` workers announced (section 5.16): one, or during a rolling upgrade one per
    /// version.
    var definitions: [ServedDefinition] = []
    /// Definitions of the type requests may be pinned to (section 5.18): every one served since the broker started,
    /// the newest last, at most ``maxKnownDefinitions`` (a request pinned to one forgotten runs on any worker).
    var known: [AnnouncedDefinition] = []
    /// Whether the definition with digest `later` can serve requests pinned to `earlier` (key: both digests), as
    /// worked out once by ``DefinitionCompatibility``.
    var compatible: [String: Bool] = [:]
    /// Requests waiting for a worker of this type.
    var queue = RequestQueue()
    /// While no worker serves the type, until when it still counts as served: the grace period after its last worker
    /// left, or the broker's startup grace period for a type first asked for before any worker announced it (6.6).
    var servedUntil: UInt64?
    /// Where the next round-robin search for a worker starts.
    var cursor = 0
    var pace = ServicePace()
    /// The body of the last `busy` refusal by pace, the pace it names (jobs/s, two significant digits) and the
    /// pushback rate it carries: under overload most requests are refused, so the refusal's body is built once per
    /// pace and rate, not once per request.
    var paceRefusal: (jobsPerSecond: Int, pushbackRate: Int?, body: [UInt8])?
    /// Since when the queue has held a request without emptying (set when a request joins an empty queue; only
    /// meaningful while the queue is not empty). A queue that has not emptied for
    /// ``BrokerConfiguration/standingQueueInterval`` is a standing queue (`Docs/OVERLOAD.md`).
    var queueBusySince: UInt64 = 0
    /// How long the type's workers take to start one job per slot at the measured pace (nanoseconds; refreshed with
    /// the pace): a standing queue is never held shorter than that, so that every slot finds a job waiting.
    var turnoverNanos: UInt64 = 0

    /// How many definitions of a type the broker remembers for pinned requests.
    static let maxKnownDefinitions = 16

    init(name: [UInt8]) { self.name = name }

    /// The name for people (error messages, logs): at most 64 bytes of it (section 4.8).
    var displayName: String { name.withUnsafeBytes { WireText.display($0) } }

    /// Served: a worker announced it, or its grace period has not ended (section 6.6).
    func isServed(now: UInt64) -> Bool {
        guard workers.isEmpty else { return true }
        guard let servedUntil else { return false }
        return now < servedUntil
    }
}
