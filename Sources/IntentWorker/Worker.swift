public import IntentKit
public import Logging
public import ServiceLifecycle
import Synchronization
import ZeroMQ

/// A Concierge worker as a ServiceLifecycle `Service`: connects to the broker, registers the intent types of its
/// ``HandlerProvider``, runs every job in a fresh handler, heartbeats, reconnects with backoff when the broker goes
/// away, and on graceful shutdown (SIGTERM) drains: it takes nothing new, finishes what it has, tells the broker
/// it is leaving, and returns.
///
/// It speaks `CIPW02` (`Schemas/PROTOCOL.md` section 5.13): handlers see a handle job's idempotency key and attempt
/// in their ``HandlerContext``, and a CANCEL from the broker cancels the Swift `Task` running the job, so
/// `Task.isCancelled`, `CancellationError` and `withTaskCancellationHandler` work in handlers as usual, whichever
/// ``WorkerConfiguration/JobExecution`` runs them. A handler that stops by throwing `CancellationError` is answered
/// `cancelled`; one that finishes anyway is answered with its result.
///
/// Handler authors get their own worker executable in a few lines:
/// ```swift
/// var provider = HandlerProvider()
/// provider.register { MyHandler() }
/// let worker = Worker(configuration: .init(), provider: provider)
/// try await ServiceGroup(services: [worker], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger).run()
/// ```
public final class Worker: Service, Sendable {
    let loop: WorkerLoop
    private let started = Atomic<Bool>(false)

    public init(
        configuration: WorkerConfiguration,
        provider: HandlerProvider,
        logger: Logger = Logger(label: "concierge.worker")
    ) {
        loop = WorkerLoop(configuration: configuration, provider: provider, logger: logger)
    }

    /// Runs until the worker has drained after SIGTERM/SIGINT (or ``stop()``). Throws ``WorkerError`` with
    /// `already-ran` when called a second time, and with `poll-failed` when waiting on its socket failed.
    public func run() async throws {
        guard !started.exchange(true, ordering: .acquiringAndReleasing) else {
            throw WorkerError(code: .alreadyRan, message: "a worker runs once; make a new one to run again")
        }
        let loop = self.loop
        try await withTaskCancellationOrGracefulShutdownHandler {
            try await withCheckedThrowingContinuation { (finished: CheckedContinuation<Void, any Error>) in
                loop.start { failure in
                    if let failure { finished.resume(throwing: failure) } else { finished.resume() }
                }
            }
        } onCancelOrGracefulShutdown: {
            loop.requestDrain()
        }
    }

    /// Asks a running worker to drain and leave (as SIGTERM does).
    public func stop() { loop.requestDrain() }
}
