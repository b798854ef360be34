/// A picture of the state for operators (``BrokerSnapshot``).
extension BrokerCore {
    /// The queues, oldest waits, requests in flight and workers as of `now` (monotonic nanoseconds). Costs a pass
    /// over the intent types and the workers, not over the requests: the loop makes one about once a second.
    mutating func snapshot(now: UInt64) -> BrokerSnapshot {
        var snapshot = BrokerSnapshot()
        snapshot.requestsInFlight = requests.count
        snapshot.queued = queuedCount
        snapshot.workers.reserveCapacity(workers.count)
        for worker in workers.values.sorted(by: { $0.id < $1.id }) {
            snapshot.workers.append(
                BrokerSnapshot.Worker(
                    name: worker.name, capacity: worker.capacity, jobs: worker.jobs.count, draining: worker.draining,
                    blocked: worker.blocked))
        }
        snapshot.intentTypes.reserveCapacity(intentTypes.count)
        for index in intentTypes.indices {
            let arrival = intentTypes[index].queue.headArrival()
            var type = BrokerSnapshot.IntentType(
                name: intentTypes[index].displayName, queueDepth: intentTypes[index].queue.count,
                oldestAgeNanoseconds: arrival.map { now > $0 ? now - $0 : 0 } ?? 0,
                workers: intentTypes[index].workers.count, capacity: 0, capacityUsed: 0, capacityFree: 0)
            for id in intentTypes[index].workers {
                guard let worker = workers[id] else { continue }
                type.capacity += worker.capacity
                type.capacityUsed += worker.jobs.count
                if worker.hasRoom { type.capacityFree += worker.capacity - worker.jobs.count }
            }
            snapshot.intentTypes.append(type)
        }
        return snapshot
    }
}
