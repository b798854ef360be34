import IntentWire

/// A picture of the state for operators (``BrokerSnapshot``).
extension BrokerCore {
    /// The queues, oldest waits, requests in flight and workers as of `now` (monotonic nanoseconds). Costs a pass
    /// over the intent types and the workers, not over the requests: the loop makes one about once a second.
    mutating func snapshot(now: UInt64) -> BrokerSnapshot {
        var snapshot = BrokerSnapshot()
        snapshot.requestsInFlight = requests.count
        snapshot.conversationsOpen = conversations.openCount
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

extension BrokerCore {
    /// STATS (section 5.14): a query any backend peer may send, registered or not, answered with a snapshot of the
    /// core (empty while the journal is unavailable: the core holds nothing then; `stopping` once the broker shuts
    /// down) in the query's signature version.
    mutating func statsRequested(by routingID: [UInt8], version: UInt8, now: UInt64) {
        let snapshot = snapshot(now: now)
        let intents = workers.values.sorted { $0.id < $1.id }.map { worker in
            worker.intentTypes.map { intentTypes[$0].displayName }
        }
        let state = isShuttingDown ? "stopping" : journalLink.isUnavailable ? "unavailable" : "active"
        var stats = BrokerStats(
            snapshot, workerIntents: intents, state: state, defaultDeadline: configuration.defaultDeadline)
        for index in stats.intentTypes.indices {
            guard let type = intentTypeIndex[ByteKey(Array(stats.intentTypes[index].name.utf8))] else { continue }
            stats.intentTypes[index].definitions = intentTypes[type].definitions.map { served in
                BrokerStats.Definition(
                    digest: served.definition.digest, version: served.definition.version,
                    workers: served.workers.compactMap { workers[$0]?.name }, definition: served.definition.json)
            }
        }
        stats.refused = Array(recentRefusals)
        actions.append(.control(routingID: routingID, version: version, .stats(stats.serialized())))
    }
}
