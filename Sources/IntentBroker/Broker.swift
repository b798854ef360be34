public import Logging
public import ServiceLifecycle
import Synchronization
import ZeroMQ

/// The Concierge broker as a ServiceLifecycle `Service`: receives intents from clients on the frontend,
/// distributes resolve/confirm/handle jobs to workers on the backend, and answers every request by its deadline.
///
/// The sockets are bound when the broker is created, so bind errors surface at once and ephemeral endpoints
/// (`tcp://127.0.0.1:*`) can be read from ``frontendEndpoint`` and ``backendEndpoint`` before ``run()``.
/// ``run()`` runs the broker's loop on a dedicated thread (never on Swift's cooperative pool) until graceful
/// shutdown or cancellation, then lets in-flight requests finish for ``BrokerConfiguration/shutdownGracePeriod``.
///
/// Secure by default: without ``BrokerConfiguration/curve`` the broker refuses endpoints other hosts could reach
/// (``BrokerError/Code/insecureEndpoint``) unless ``BrokerConfiguration/allowInsecureEndpoints`` is set; with it,
/// every connection is encrypted and only listed client and worker keys are admitted.
public final class Broker: Service, Sendable {
    private let loop: BrokerLoop

    public init(configuration: BrokerConfiguration = .init(), logger: Logger = Logger(label: "concierge.broker")) throws
    {
        try configuration.checkEndpointSecurity()
        loop = try BrokerLoop(configuration: configuration, logger: logger)
    }

    /// The frontend endpoint actually bound.
    public var frontendEndpoint: String { loop.frontendEndpoint }
    /// The backend endpoint actually bound.
    public var backendEndpoint: String { loop.backendEndpoint }
    /// Counters as of the broker's stop.
    public var statistics: BrokerStatistics { loop.finalStatistics.withLock { $0 } }

    public func run() async throws {
        let loop = self.loop
        await withTaskCancellationOrGracefulShutdownHandler {
            await SocketThread.run(name: "concierge-broker") { loop.run() }
        } onCancelOrGracefulShutdown: {
            loop.requestStop()
        }
    }

    /// Asks a running broker to shut down gracefully (as SIGTERM does).
    public func stop() {
        loop.requestStop()
    }
}
