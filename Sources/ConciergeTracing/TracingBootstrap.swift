public import Logging
import Tracing

#if Tracing
    import OTel
#endif

/// Bootstraps tracing for a process (Docs/TRACING.md): with ``TracingConfiguration/enabled``, Swift OTel's tracer
/// (OTLP/HTTP with protobuf, W3C propagation) becomes `InstrumentationSystem`'s tracer, and the ``TracingExporter``
/// that batches and exports its spans is returned, to run first in the process's `ServiceGroup` or around its work
/// (spans still batched are exported when it stops). The standard `OTEL_*` environment variables configure it
/// (`OTEL_EXPORTER_OTLP_ENDPOINT`, `OTEL_SERVICE_NAME`, `OTEL_BSP_SCHEDULE_DELAY`, `OTEL_TRACES_SAMPLER`, ...). Only
/// traces: metrics and logs keep their own exporters.
///
/// Without tracing nothing is bootstrapped (the no-op tracer stays: spans cost a nil check) and nil is returned.
/// Bootstrapping twice in one process is a programming error (swift-distributed-tracing traps).
public enum TracingBootstrap {
    /// Whether this build can export spans (the package trait `Tracing`, README "Build options").
    #if Tracing
        public static let isBuilt = true
    #else
        public static let isBuilt = false
    #endif

    /// Bootstraps tracing as `configuration` says; returns the exporter, or nil when tracing is off.
    /// - Throws: ``TracingNotBuilt`` when tracing is asked for in a build without the `Tracing` trait; Swift OTel's
    ///   configuration errors (e.g. an unsupported `OTEL_EXPORTER_OTLP_TRACES_PROTOCOL`).
    public static func bootstrap(_ configuration: TracingConfiguration, logger: Logger) throws -> TracingExporter? {
        guard configuration.enabled else { return nil }
        #if Tracing
            return try bootstrapOTel(configuration, logger: logger)
        #else
            throw TracingNotBuilt()
        #endif
    }

    #if Tracing
        private static func bootstrapOTel(
            _ configuration: TracingConfiguration, logger: Logger
        ) throws -> TracingExporter {
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
            return TracingExporter(service: backend.service, logger: logger)
        }
    #endif
}

/// Tracing was asked for (`--tracing`) from a build without the package trait `Tracing`: nothing would export the
/// spans, so the process refuses to start rather than trace into nothing.
public struct TracingNotBuilt: Error, CustomStringConvertible {
    /// The stable code: `tracing-not-built`.
    public let code = "tracing-not-built"

    public init() {}

    public var description: String {
        "\(code): this build cannot export spans; build with the Tracing trait (swift build --traits Tracing, or "
            + "Scripts/build-release --traits Full; README, \"Build options\")"
    }
}
