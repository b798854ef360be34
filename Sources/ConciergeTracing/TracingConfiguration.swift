/// Whether and where the process exports spans (Docs/TRACING.md). Off by default.
public struct TracingConfiguration: Sendable, Hashable {
    /// Export spans through Swift OTel (OTLP/HTTP), configured by the standard `OTEL_*` environment variables.
    public var enabled: Bool
    /// The service name when `OTEL_SERVICE_NAME` does not say (e.g. `concierge-broker`).
    public var serviceName: String

    /// Creates a configuration; tracing is off unless `enabled`.
    public init(enabled: Bool = false, serviceName: String = "concierge") {
        self.enabled = enabled
        self.serviceName = serviceName
    }
}
