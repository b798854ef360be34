import ArgumentParser
import ConciergeHTTP
import CoreMetrics
import Logging
import Prometheus

/// `--http HOST:PORT`: serve `/metrics`, `/livez` and `/readyz` (off unless given). Like the ZeroMQ endpoints, an
/// address other hosts can reach is refused unless `--http-insecure` says so: the endpoints have no authentication.
struct HTTPOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "Serve /metrics (Prometheus), /livez and /readyz on this address (e.g. 127.0.0.1:9464; port 0 picks one).",
            valueName: "host:port"))
    var http: String?

    @Flag(
        help: "Allow a --http address other hosts can reach (the endpoints have no authentication; firewall them).")
    var httpInsecure = false

    /// The endpoint to serve, nil without `--http`.
    func endpoint() throws -> HTTPEndpoint? {
        guard let http else { return nil }
        let endpoint: HTTPEndpoint
        do {
            endpoint = try HTTPEndpoint(parsing: http)
        } catch {
            throw ValidationError("--http: \(error.message)")
        }
        guard endpoint.isLoopback || httpInsecure else {
            throw ValidationError(
                "--http \(http) can be reached from other hosts and has no authentication: bind 127.0.0.1, or add "
                    + "--http-insecure (insecure-endpoint)")
        }
        return endpoint
    }

    /// The endpoint to serve, nil without `--http`, once it is known to be free: a command calls this before it
    /// starts anything, so that a port in use ends it at once (exit status 1, `Error: bind-failed: --http
    /// 127.0.0.1:9090: address already in use`) instead of after its other services started and stopped again.
    func bindableEndpoint() throws -> HTTPEndpoint? {
        guard let endpoint = try endpoint() else { return nil }
        do {
            try endpoint.checkBindable()
        } catch {
            throw HTTPEndpointError(code: error.code, message: "--http \(error.message)")
        }
        return endpoint
    }

    func validate() throws { _ = try endpoint() }
}

/// The metrics registry of a process and the swift-metrics factory that fills it.
struct MetricsRegistry {
    let registry = PrometheusCollectorRegistry()
    let factory: PrometheusMetricsFactory

    /// Reply-time histograms get bucket edges at the broker's default deadline and its hard limit (alert on the
    /// share of first replies above the deadline), with the usual ones around them.
    init(deadline: Duration = .seconds(3), hardLimit: Duration = .seconds(60)) {
        var factory = PrometheusMetricsFactory(registry: registry)
        let common: [Duration] = [
            .microseconds(500), .milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10),
            .milliseconds(25), .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500),
            .seconds(1), .milliseconds(2500), .seconds(5), .seconds(10), .seconds(30),
        ]
        let replies = Array(Set(common + [deadline, hardLimit])).sorted()
        factory.defaultDurationHistogramBuckets = common
        factory.durationHistogramBuckets = [
            "concierge_first_reply_duration_seconds": replies,
            "concierge_final_reply_duration_seconds": replies,
            "concierge_handler_duration_seconds": replies,
            "concierge_journal_commit_duration_seconds": [
                .microseconds(100), .microseconds(250), .microseconds(500), .milliseconds(1), .milliseconds(2),
                .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100),
                .milliseconds(250), .seconds(1), .seconds(5),
            ],
        ]
        self.factory = factory
    }
}
