import ConciergeHTTP
import ConciergeTestKit
import ConciergeTop
import CoreMetrics
import Logging
import Prometheus
import ServiceLifecycle
import Synchronization
import Testing

/// The HTTP endpoints over a real socket: `/metrics` from the registry, `/livez` and `/readyz` from their checks.
@Suite struct ObservabilityServerTests {
    @Test func metricsLiveAndReadyAnswerFromTheRegistryAndTheChecks() async throws {
        let registry = PrometheusCollectorRegistry()
        let factory = PrometheusMetricsFactory(registry: registry)
        Counter(label: "demo_requests_total", dimensions: [("outcome", "final")], factory: factory).increment(by: 3)
        let ready = Atomic(false)
        let server = ObservabilityServer(
            endpoint: HTTPEndpoint(host: "127.0.0.1", port: 0), registry: registry, logger: Logger(label: "test"),
            live: { .healthy("live") },
            ready: { ready.load(ordering: .relaxed) ? .healthy("ready") : .unhealthy("not ready: no worker") })
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await server.run() }
            let start = ContinuousClock.now
            while server.port == nil {
                #expect(ContinuousClock.now - start < .seconds(30), "the server did not start")
                try await Task.sleep(for: .milliseconds(10))
            }
            let port = try #require(server.port)
            let metrics = try httpGet(port: port, "/metrics")
            #expect(metrics.status == 200)
            #expect(Scrape(metrics.body).sum("demo_requests_total", ["outcome": "final"]) == 3)
            #expect(try httpGet(port: port, "/livez") == (200, "live\n"))
            #expect(try httpGet(port: port, "/readyz") == (503, "not ready: no worker\n"))
            ready.store(true, ordering: .relaxed)
            #expect(try httpGet(port: port, "/readyz") == (200, "ready\n"))
            #expect(try httpGet(port: port, "/nothing").status == 404)
            group.cancelAll()
        }
    }

    @Test func endpointsParseAndOnlyLoopbackIsLoopback() throws {
        #expect(try HTTPEndpoint(parsing: "127.0.0.1:9464") == HTTPEndpoint(host: "127.0.0.1", port: 9464))
        #expect(try HTTPEndpoint(parsing: "[::1]:0") == HTTPEndpoint(host: "::1", port: 0))
        #expect(try HTTPEndpoint(parsing: "[::1]:0").description == "[::1]:0")
        #expect(try HTTPEndpoint(parsing: "localhost:80").isLoopback)
        #expect(try !HTTPEndpoint(parsing: "0.0.0.0:9464").isLoopback)
        #expect(try !HTTPEndpoint(parsing: "10.0.0.1:9464").isLoopback)
        for bad in ["9464", ":9464", "host:", "host:70000", "host:x"] {
            #expect(throws: HTTPEndpointError.self, "\(bad)") { try HTTPEndpoint(parsing: bad) }
        }
    }
}
