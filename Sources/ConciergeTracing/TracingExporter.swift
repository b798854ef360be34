#if Tracing
    import Logging
    import ServiceLifecycle
#endif

/// The span exporter that ``TracingBootstrap/bootstrap(_:logger:)`` starts when tracing is on: while it runs, it
/// batches the process's spans and sends them over OTLP/HTTP; when it stops gracefully, it sends what is still
/// batched. Only a build with the package trait `Tracing` makes one.
///
/// A process runs it in one of two ways:
/// - as a ServiceLifecycle `Service` (``run()`` is the service's `run()`; the `concierge` executable's commands make
///   it one), first in the process's `ServiceGroup`, so that it stops last and sends the last spans;
/// - around the process's work with ``exporting(during:)``, without a `ServiceGroup` (the worker process, whose
///   default build has no swift-service-lifecycle `ServiceLifecycle` module).
public struct TracingExporter: Sendable {
    #if Tracing
        /// Swift OTel's batching and exporting service.
        let service: any Service
        let logger: Logger

        init(service: any Service, logger: Logger) {
            self.service = service
            self.logger = logger
        }
    #endif

    /// Runs the exporter until the `ServiceGroup` that runs it shuts down gracefully (then it sends the spans still
    /// batched and returns) or is cancelled.
    public func run() async throws {
        #if Tracing
            try await service.run()
        #endif
    }

    /// Runs `body` with the exporter running beside it, then stops the exporter gracefully (it sends the spans still
    /// batched) and returns `body`'s result, as a `ServiceGroup` with the exporter first and `body`'s work after it
    /// would. When `body` throws, the exporter is cancelled and the error rethrown; when the exporter stops first
    /// (it failed), `body` is cancelled and waited for, and the exporter's error is thrown.
    public func exporting<Value: Sendable>(
        during body: @escaping @Sendable () async throws -> Value
    ) async throws -> Value {
        #if Tracing
            let group = ServiceGroup(services: [service], gracefulShutdownSignals: [], logger: logger)
            let outcome = await withTaskGroup(of: _Ended<Value>.self) { tasks -> Result<Value, any Error> in
                tasks.addTask {
                    do { return .exporter(.success(try await group.run())) } catch { return .exporter(.failure(error)) }
                }
                tasks.addTask {
                    do { return .body(.success(try await body())) } catch { return .body(.failure(error)) }
                }
                switch await tasks.next() {
                case .body(let result):
                    if case .success = result {
                        await group.triggerGracefulShutdown()
                    } else {
                        tasks.cancelAll()
                    }
                    // `body`'s error first; else the exporter's, if its graceful stop failed.
                    if case .success = result, case .exporter(.failure(let error)) = await tasks.next() {
                        return .failure(error)
                    }
                    return result
                case .exporter(let result):
                    tasks.cancelAll()
                    _ = await tasks.next()
                    if case .failure(let error) = result { return .failure(error) }
                    // Not reached: a group whose only service ends by itself throws (serviceFinishedUnexpectedly).
                    return .failure(CancellationError())
                case nil:
                    fatalError("a task group with two tasks ended without a result")
                }
            }
            return try outcome.get()
        #else
            return try await body()
        #endif
    }
}

#if Tracing
    /// Which of ``TracingExporter/exporting(during:)``'s two tasks ended, and how.
    private enum _Ended<Value: Sendable>: Sendable {
        case body(Result<Value, any Error>)
        case exporter(Result<Void, any Error>)
    }
#endif
