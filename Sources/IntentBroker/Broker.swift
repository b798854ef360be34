public import IntentPermissions
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
///
/// A broker runs once: ``run()`` may be called a single time (a second call throws
/// ``BrokerError/Code/alreadyRan``). A broker dropped without running closes its sockets (and stops its ZAP
/// handler) at once, so its endpoints are free again.
public final class Broker: Service, Sendable {
    let loop: BrokerLoop
    /// Whether ``run()`` was called.
    private let started = Atomic(false)

    public init(configuration: BrokerConfiguration = .init(), logger: Logger = Logger(label: "concierge.broker")) throws
    {
        try configuration.checkEndpointSecurity()
        guard configuration.ioThreads >= 0 else {
            throw BrokerError(
                code: .badConfiguration, message: "ioThreads must be at least 0, not \(configuration.ioThreads)")
        }
        loop = try BrokerLoop(configuration: configuration, logger: logger)
    }

    deinit {
        // A broker that never ran still holds bound sockets and, with CURVE, a ZAP thread that keeps its handler (and
        // so the context) alive: close them now. A broker that ran closed them when its loop ended. No wait here is
        // unbounded: the sockets linger 0 until the loop raises it, and the ZAP thread ends at its next wake-up.
        if !started.load(ordering: .acquiring) { loop.closeUnstarted() }
    }

    /// The frontend endpoint actually bound.
    public var frontendEndpoint: String { loop.frontendEndpoint }
    /// The backend endpoint actually bound.
    public var backendEndpoint: String { loop.backendEndpoint }
    /// Liveness and readiness (for `/livez` and `/readyz`), readable from any thread while the broker runs.
    public var health: BrokerHealth { loop.health }
    /// Puts new permissions in force while the broker runs (from any thread; `Docs/PERMISSIONS.md`): new requests
    /// and registrations are decided by them from the loop's next turn, requests already accepted go on, and a
    /// registered worker that may no longer serve one of its types is drained (it gets no new job). Connections stay
    /// up. nil: every admitted key may do everything again.
    ///
    /// - Throws: ``BrokerError/Code/permissionsNeedCurve`` when the broker runs without CURVE (nothing changes).
    public func replacePermissions(_ permissions: Permissions?) throws(BrokerError) {
        guard permissions == nil || loop.configuration.curve != nil else {
            throw BrokerError(
                code: .permissionsNeedCurve,
                message: "this broker runs without CURVE: there is no identity to give permissions to")
        }
        loop.replacePermissions(permissions)
    }

    /// Counters as of the broker's stop.
    public var statistics: BrokerStatistics { loop.finalStatistics.withLock { $0 } }

    /// Runs the broker until graceful shutdown or cancellation (see ``Broker``), then closes its sockets.
    ///
    /// - Throws: ``BrokerError/Code/alreadyRan`` if `run()` was called before (a broker runs once);
    ///   ``BrokerError/Code/pollFailed`` if waiting on the sockets failed, which stops the broker (as at shutdown,
    ///   every open request gets its ending reply) but is not a normal stop.
    public func run() async throws {
        guard !started.exchange(true, ordering: .acquiringAndReleasing) else {
            throw BrokerError(
                code: .alreadyRan, message: "this broker has run already; a broker runs once (make a new one)")
        }
        let loop = self.loop
        let outcome = await withTaskCancellationOrGracefulShutdownHandler {
            await SocketThread.run(name: "concierge-broker") { () -> Result<Void, BrokerError> in
                do throws(BrokerError) {
                    return .success(try loop.run())
                } catch {
                    return .failure(error)
                }
            }
        } onCancelOrGracefulShutdown: {
            loop.requestStop()
        }
        try outcome.get()
    }

    /// Runs the broker on the calling thread until ``stop()`` has been called and the broker has shut down, then
    /// closes its sockets: for programs that do not use Swift concurrency, and for tools that cannot follow it
    /// (valgrind cannot run a program whose main thread parks in `dispatchMain()`, as an `async` main does; see
    /// `Sources/concierge-broker-sync`). Throws as ``run()`` does.
    public func runOnThisThread() throws(BrokerError) {
        guard !started.exchange(true, ordering: .acquiringAndReleasing) else {
            throw BrokerError(
                code: .alreadyRan, message: "this broker has run already; a broker runs once (make a new one)")
        }
        try loop.run()
    }

    /// Asks a running broker to shut down gracefully (as SIGTERM does).
    public func stop() {
        loop.requestStop()
    }
}
