import ConciergeHTTP
import CoreMetrics
import IntentPool
import Logging
import ServiceLifecycle

/// The pool's HTTP endpoints (`concierge pool --http`, and `up --http` beside the broker's): its metrics, and its
/// health as `/livez` and `/readyz` answer it.
///
/// - `concierge_pool_workers{state="wanted"|"running"}`: the workers the pool keeps, and the worker processes alive
///   (draining ones included);
/// - `concierge_pool_restarts_total`: crashed workers restarted;
/// - `concierge_pool_jobs_in_progress`: the jobs its workers hold, from the broker's STATS answer (0 when the broker
///   does not answer);
/// - `concierge_pool_autoscale_target`: with `--autoscale`, the size the autoscaler keeps now.
///
/// Live: the pool's supervisor runs. Ready: at least one worker runs and every wanted worker has started.
enum PoolHTTP {
    static func server(
        _ endpoint: HTTPEndpoint, metrics: MetricsRegistry, pool: WorkerPool, logger: Logger
    ) -> ObservabilityServer {
        ObservabilityServer(
            endpoint: endpoint, registry: metrics.registry, logger: logger,
            live: { liveness(pool) }, ready: { readiness(pool) })
    }

    static func liveness(_ pool: WorkerPool) -> HealthStatus {
        pool.isSupervising
            ? .healthy("live: the pool supervises \(pool.size) workers")
            : .unhealthy("the pool's supervisor is not running")
    }

    static func readiness(_ pool: WorkerPool) -> HealthStatus {
        let wanted = pool.size
        let counts = pool.processCounts
        guard counts.running >= 1 else { return .unhealthy("no worker is running") }
        guard counts.started >= wanted else {
            return .unhealthy("\(counts.started) of \(wanted) workers started")
        }
        return .healthy("ready: \(counts.started) of \(wanted) workers started")
    }

    /// Two checks as one (`up`: the broker's and the pool's): healthy when both are, saying both.
    static func both(_ broker: HealthStatus, _ pool: HealthStatus) -> HealthStatus {
        HealthStatus(
            isHealthy: broker.isHealthy && pool.isHealthy, detail: "broker: \(broker.detail); pool: \(pool.detail)")
    }
}

/// Sets the pool's gauges once a second from the pool (and what it learnt from its broker), as a `Service`.
struct PoolMetricsService: Service {
    let pool: WorkerPool
    let wanted: Meter
    let running: Meter
    let restarts: CoreMetrics.Counter
    let jobs: Meter
    let target: Meter?

    init(pool: WorkerPool, metrics: MetricsRegistry, autoscaling: Bool) {
        self.pool = pool
        let factory = metrics.factory
        wanted = Meter(label: "concierge_pool_workers", dimensions: [("state", "wanted")], factory: factory)
        running = Meter(label: "concierge_pool_workers", dimensions: [("state", "running")], factory: factory)
        restarts = CoreMetrics.Counter(label: "concierge_pool_restarts_total", factory: factory)
        jobs = Meter(label: "concierge_pool_jobs_in_progress", factory: factory)
        target = autoscaling ? Meter(label: "concierge_pool_autoscale_target", factory: factory) : nil
    }

    func run() async throws {
        await cancelWhenGracefulShutdown {
            var counted = 0
            while !Task.isCancelled {
                wanted.set(pool.size)
                running.set(pool.processCounts.running)
                let total = pool.restarts
                if total > counted {
                    restarts.increment(by: Int64(total - counted))
                    counted = total
                }
                jobs.set(pool.brokerView?.jobsInProgress ?? 0)
                target?.set(pool.size)
                try? await Task.sleep(for: .seconds(1))
            }
        }
    }
}
