import ConciergeHTTP
import IntentBroker
import Logging

/// The broker's HTTP endpoints: its metrics registry, and its health as `/livez` and `/readyz` answer it.
enum BrokerHTTP {
    static func server(
        _ endpoint: HTTPEndpoint, metrics: MetricsRegistry, broker: Broker, logger: Logger
    ) -> ObservabilityServer {
        let health = broker.health
        return ObservabilityServer(
            endpoint: endpoint, registry: metrics.registry, logger: logger,
            live: { HealthStatus(health.liveness()) }, ready: { HealthStatus(health.readiness()) })
    }
}

extension HealthStatus {
    init(_ report: BrokerHealth.Report) { self.init(isHealthy: report.isHealthy, detail: report.detail) }
}
