public import ConciergeTracing
public import ServiceLifecycle

/// The span exporter in the commands' `ServiceGroup`s (broker, gateway, `up`): first in the group, so it stops last
/// and sends the last spans. Its `run()` is ``TracingExporter/run()``.
extension TracingExporter: Service {}
