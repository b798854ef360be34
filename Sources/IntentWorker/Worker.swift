public import IntentKit
public import Logging
public import ServiceLifecycle
import ZeroMQ

/// A Concierge worker as a ServiceLifecycle `Service`: connects to the broker, registers the intent types of its
/// ``HandlerProvider``, runs every job in a fresh handler, heartbeats, reconnects with backoff when the broker goes
/// away, and on graceful shutdown (SIGTERM) drains: it takes nothing new, finishes what it has, tells the broker
/// it is leaving, and returns.
///
/// Handler authors get their own worker executable in a few lines:
/// ```swift
/// var provider = HandlerProvider()
/// provider.register { MyHandler() }
/// let worker = Worker(configuration: .init(), provider: provider)
/// try await ServiceGroup(services: [worker], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger).run()
/// ```
public final class Worker: Service, Sendable {
    private let loop: WorkerLoop

    public init(
        configuration: WorkerConfiguration,
        provider: HandlerProvider,
        logger: Logger = Logger(label: "concierge.worker")
    ) {
        loop = WorkerLoop(configuration: configuration, provider: provider, logger: logger)
    }

    public func run() async throws {
        let loop = self.loop
        await withTaskCancellationOrGracefulShutdownHandler {
            await withCheckedContinuation { (finished: CheckedContinuation<Void, Never>) in
                loop.start { finished.resume() }
            }
        } onCancelOrGracefulShutdown: {
            loop.requestDrain()
        }
    }

    /// Asks a running worker to drain and leave (as SIGTERM does).
    public func stop() { loop.requestDrain() }
}
