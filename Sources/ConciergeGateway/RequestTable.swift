import Synchronization

/// The requests the gateway sent, by request id, kept for ``GatewayConfiguration/endingTimeToLive`` after they end,
/// and at most ``maxEnded`` ended ones (the oldest go first): memory stays bounded under any load. The broker keeps
/// endings too, so a forgotten one is still answered (`GET` asks the broker).
final class RequestTable: Sendable {
    /// The most ended requests remembered.
    static let maxEnded = 100_000

    private struct State {
        var requests: [String: TrackedRequest] = [:]
        /// Ended requests in the order they ended, to forget them after the time to live.
        var ended: [(id: String, at: ContinuousClock.Instant)] = []
        var endedHead = 0
        /// Added and not ended yet (``ended(_:)`` is called once per request).
        var open = 0
        var shuttingDown = false
    }

    private let state = Mutex(State())
    private let timeToLive: Duration

    init(timeToLive: Duration) {
        self.timeToLive = timeToLive
    }

    /// Adds a request (its id is new: the gateway makes it).
    func add(_ request: TrackedRequest) {
        let shuttingDown = state.withLock { state in
            purge(&state)
            state.requests[request.id] = request
            state.open += 1
            return state.shuttingDown
        }
        if shuttingDown { request.shutDown() }
    }

    /// The request `id` if `identity` sent it.
    func request(_ id: String, of identity: GatewayIdentity) -> TrackedRequest? {
        state.withLock { state in
            purge(&state)
            guard let request = state.requests[id], request.identity == identity else { return nil }
            return request
        }
    }

    /// Notes that `request` ended, to forget it later.
    func ended(_ request: TrackedRequest) {
        state.withLock { state in
            state.ended.append((request.id, .now))
            state.open -= 1
        }
    }

    /// The number of requests not ended yet (counted, not searched: the drain asks often).
    var open: Int { state.withLock { $0.open } }

    /// The drain time is over: every waiter answers `shutting-down` now, and so does any later one.
    func shutDown() {
        let requests = state.withLock { state in
            state.shuttingDown = true
            return Array(state.requests.values)
        }
        for request in requests { request.shutDown() }
    }

    private func purge(_ state: inout State) {
        let limit = ContinuousClock.now - timeToLive
        while state.endedHead < state.ended.count,
            state.ended[state.endedHead].at < limit || state.ended.count - state.endedHead > Self.maxEnded
        {
            state.requests.removeValue(forKey: state.ended[state.endedHead].id)
            state.endedHead += 1
        }
        if state.endedHead > 1024 && state.endedHead * 2 > state.ended.count {
            state.ended.removeFirst(state.endedHead)
            state.endedHead = 0
        }
    }
}
