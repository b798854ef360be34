import Metrics

/// The gateway's metrics (Prometheus names in Docs/GATEWAY.md).
struct GatewayMetrics: Sendable {
    private let factory: (any MetricsFactory)?
    private let streams: Gauge?
    private let answers: [Int: Counter]
    /// The response time of each route (``ProblemMiddleware/route(_:)``), made once: a factory lookup per request
    /// costs more than the rest of the metrics.
    private let timers: [String: Timer]

    init(factory: (any MetricsFactory)?) {
        self.factory = factory
        guard let factory else {
            streams = nil
            answers = [:]
            timers = [:]
            return
        }
        var timers: [String: Timer] = [:]
        for route in ProblemMiddleware.routes {
            timers[route] = Timer(
                label: "concierge_gateway_response_seconds", dimensions: [("route", route)], factory: factory)
        }
        self.timers = timers
        streams = Gauge(label: "concierge_gateway_open_streams", factory: factory)
        var answers: [Int: Counter] = [:]
        for status in [200, 201, 202, 400, 401, 404, 405, 406, 409, 413, 415, 422, 429, 500, 501, 502, 503, 504] {
            answers[status] = Counter(
                label: "concierge_gateway_responses_total", dimensions: [("status", String(status))],
                factory: factory)
        }
        self.answers = answers
    }

    func answered(status: Int) {
        if let counter = answers[status] {
            counter.increment()
        } else if let factory {
            Counter(
                label: "concierge_gateway_responses_total", dimensions: [("status", String(status))], factory: factory
            )
            .increment()
        }
    }

    /// How long a route took to answer (to its response head: for an event stream, its first reply), by route.
    func took(_ duration: Duration, route: String) {
        guard let factory else { return }
        (timers[route]
            ?? Timer(label: "concierge_gateway_response_seconds", dimensions: [("route", route)], factory: factory))
            .recordNanoseconds(
                duration.components.seconds * 1_000_000_000 + duration.components.attoseconds / 1_000_000_000)
    }

    func openStreams(_ count: Int) { streams?.record(count) }
}
