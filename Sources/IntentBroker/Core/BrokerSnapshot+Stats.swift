import IntentWire

extension BrokerStats {
    /// The body of a STATS answer (PROTOCOL.md 5.14) from a snapshot; `workerIntents` gives the intent types of each
    /// of the snapshot's workers, in the same order.
    init(_ snapshot: BrokerSnapshot, workerIntents: [[String]], state: String, defaultDeadline: Duration) {
        self.init(
            state: state, defaultDeadlineMilliseconds: defaultDeadline.milliseconds,
            requestsInFlight: snapshot.requestsInFlight, queued: snapshot.queued)
        intentTypes = snapshot.intentTypes.map { type in
            IntentType(
                name: type.name, queued: type.queueDepth,
                oldestAgeMilliseconds: Int(type.oldestAgeNanoseconds / 1_000_000), workers: type.workers,
                capacity: type.capacity, capacityUsed: type.capacityUsed, capacityFree: type.capacityFree)
        }
        workers = snapshot.workers.enumerated().map { index, worker in
            Worker(
                name: worker.name, capacity: worker.capacity, jobs: worker.jobs, draining: worker.draining,
                intents: index < workerIntents.count ? workerIntents[index] : [])
        }
    }
}
