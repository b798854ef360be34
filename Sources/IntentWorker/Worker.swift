public import IntentKit
public import Logging
import Synchronization
import ZeroMQ

/// A Concierge worker: connects to the broker, registers the intent types of its ``HandlerProvider``, runs every job
/// in a fresh handler, heartbeats, reconnects with backoff when the broker goes away, and, once asked to stop
/// (``stop()``, or cancellation of the task running ``run()``), drains: it takes nothing new, finishes what it has,
/// tells the broker it is leaving, and returns.
///
/// It speaks `CIPW02` (`Schemas/PROTOCOL.md` section 5.13): handlers see a handle job's idempotency key and attempt
/// in their ``HandlerContext``, and a CANCEL from the broker cancels the Swift `Task` running the job, so
/// `Task.isCancelled`, `CancellationError` and `withTaskCancellationHandler` work in handlers as usual, whichever
/// ``WorkerConfiguration/JobExecution`` runs them. A handler that stops by throwing `CancellationError` is answered
/// `cancelled`; one that finishes anyway is answered with its result.
///
/// Handler authors get a whole worker executable in one call, `WorkerMain.run(provider)` (ConciergeCommandLine: the
/// command line of `concierge worker`, and SIGTERM or SIGINT drains). A program that runs a worker itself calls
/// ``stop()`` when it should leave:
/// ```swift
/// var provider = HandlerProvider()
/// provider.register { MyHandler() }
/// let worker = Worker(configuration: .init(), provider: provider)
/// try await worker.run()  // returns once it has drained after worker.stop()
/// ```
/// To run it in a ServiceLifecycle `ServiceGroup` instead, import `IntentWorkerLifecycle` (the product of that name):
/// it makes `Worker` a `Service` that drains on the group's graceful shutdown (SIGTERM, SIGINT).
/// ```swift
/// try await ServiceGroup(services: [worker], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger).run()
/// ```
public final class Worker: Sendable {
    let loop: WorkerLoop
    private let started = Atomic<Bool>(false)

    public init(
        configuration: WorkerConfiguration,
        provider: HandlerProvider,
        logger: Logger = Logger(label: "concierge.worker")
    ) {
        loop = WorkerLoop(configuration: configuration, provider: provider, logger: logger)
    }

    /// Runs until the worker has drained after ``stop()``, after cancellation of the calling task, or (with
    /// IntentWorkerLifecycle, in a `ServiceGroup`) after the group's graceful shutdown. Throws ``WorkerError`` with
    /// `already-ran` when called a second time, and with `poll-failed` when waiting on its socket failed.
    public func run() async throws {
        guard !started.exchange(true, ordering: .acquiringAndReleasing) else {
            throw WorkerError(code: .alreadyRan, message: "a worker runs once; make a new one to run again")
        }
        let loop = self.loop
        let drain: @Sendable () -> Void = { loop.requestDrain() }
        try await withTaskCancellationHandler {
            let finish = {
                try await withCheckedThrowingContinuation { (finished: CheckedContinuation<Void, any Error>) in
                    loop.start { failure in
                        if let failure { finished.resume(throwing: failure) } else { finished.resume() }
                    }
                }
            }
            // A module that runs workers under a shutdown signal of its own (IntentWorkerLifecycle: a ServiceGroup's
            // graceful shutdown) ties that signal to the drain; it is found at run time, so a program that does not
            // link that module runs the loop alone.
            if let scope = self as? any _WorkerDrainScope {
                try await scope._withDrainTrigger(finish, onDrain: drain)
            } else {
                try await finish()
            }
        } onCancel: {
            drain()
        }
    }

    /// Asks a running worker to drain and leave, as SIGTERM does under `WorkerMain`: it takes no new job, finishes
    /// the ones it has (within ``WorkerConfiguration/drainTimeout``), tells the broker it is leaving, and then
    /// ``run()`` returns. Asking again is harmless.
    public func stop() { loop.requestDrain() }
}

/// How a module that runs workers under a shutdown signal of its own ties that signal to ``Worker/stop()``: when
/// `Worker` conforms, ``Worker/run()`` runs its loop inside ``_withDrainTrigger(_:onDrain:)``. IntentWorkerLifecycle
/// conforms it (with ServiceLifecycle's `withGracefulShutdownHandler`); nothing else should. Not API for handler
/// authors: it exists so that this module need not depend on swift-service-lifecycle.
public protocol _WorkerDrainScope {
    /// Runs `operation` (the worker's loop, until it has drained), calling `onDrain` once the scope's shutdown signal
    /// fires while it runs.
    func _withDrainTrigger(
        _ operation: () async throws -> Void, onDrain: @escaping @Sendable () -> Void
    ) async throws
}
