public import Logging
import OTel
public import ServiceLifecycle
import Tracing

/// Bootstraps tracing for a process (Docs/TRACING.md): with ``TracingConfiguration/enabled``, Swift OTel's tracer
/// (OTLP/HTTP with protobuf, W3C propagation) becomes `InstrumentationSystem`'s tracer, and the service that batches
/// and exports its spans is returned, to run in the process's `ServiceGroup` (spans still batched are exported when
/// the group shuts down). The standard `OTEL_*` environment variables configure it (`OTEL_EXPORTER_OTLP_ENDPOINT`,
/// `OTEL_SERVICE_NAME`, `OTEL_BSP_SCHEDULE_DELAY`, `OTEL_TRACES_SAMPLER`, ...). Only traces: metrics and logs keep
/// their own exporters.
///
/// Without tracing nothing is bootstrapped (the no-op tracer stays: spans cost a nil check) and nil is returned.
/// Bootstrapping twice in one process is a programming error (swift-distributed-tracing traps).
public enum TracingBootstrap {
    /// Bootstraps tracing as `configuration` says; returns the exporter's service, or nil when tracing is off.
    /// - Throws: Swift OTel's configuration errors (e.g. an unsupported `OTEL_EXPORTER_OTLP_TRACES_PROTOCOL`).
    public static func bootstrap(_ configuration: TracingConfiguration, logger: Logger) throws -> (any Service)? {
        guard configuration.enabled else { return nil }
        var otel = OTel.Configuration.default
        otel.serviceName = configuration.serviceName
        otel.logs.enabled = false
        otel.metrics.enabled = false
        otel.traces.enabled = true
        otel.traces.exporter = .otlp
        otel.traces.otlpExporter.protocol = .httpProtobuf
        let backend = try OTel.makeTracingBackend(configuration: otel)
        InstrumentationSystem.bootstrap(backend.factory)
        logger.info(
            "tracing: spans exported over OTLP/HTTP",
            metadata: ["service": "\(configuration.serviceName)"])
        return backend.service
    }
}
