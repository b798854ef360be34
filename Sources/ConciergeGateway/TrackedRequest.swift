import IntentClient
import Synchronization

/// One request the gateway sent, as its HTTP routes see it: its progress reply, its ending, and the routes waiting
/// for either (a response, an event stream, a long poll).
///
/// A task of its own reads the client's reply stream into it (``record(_:)``, ``end(_:)``), so the request goes
/// on whatever happens to the HTTP connection that started it: a caller that went away can still ask for the
/// ending with `GET /v1/requests/{id}`.
final class TrackedRequest: Sendable {
    /// How a request ended, as far as the gateway knows.
    enum Ending: Sendable {
        /// The broker's `final` or `error` reply.
        case reply(Reply)
        /// The client gave up (connection lost, closed, throttled, ...).
        case failure(GatewayProblem)
    }

    /// What a waiter sees.
    struct Snapshot: Sendable {
        var version: Int
        var progress: Reply?
        var ending: Ending?
        /// The gateway is shutting down and the drain time is over: waiters answer `shutting-down`.
        var shuttingDown: Bool
    }

    private struct State {
        var snapshot = Snapshot(version: 0, progress: nil, ending: nil, shuttingDown: false)
        var waiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
        var nextWaiter: UInt64 = 0
    }

    let id: String
    let identity: GatewayIdentity
    private let state = Mutex(State())

    init(id: String, identity: GatewayIdentity) {
        self.id = id
        self.identity = identity
    }

    var snapshot: Snapshot { state.withLock { $0.snapshot } }

    /// A reply from the broker: progress, or the ending (later replies are ignored).
    func record(_ reply: Reply) {
        if reply.isFinal {
            end(.reply(reply))
        } else {
            change { if $0.ending == nil { $0.progress = reply } }
        }
    }

    /// The request ended (first ending wins).
    func end(_ ending: Ending) {
        change { if $0.ending == nil { $0.ending = ending } }
    }

    /// The drain time is over.
    func shutDown() {
        change { $0.shuttingDown = true }
    }

    var isEnded: Bool { state.withLock { $0.snapshot.ending != nil } }

    private func change(_ body: (inout Snapshot) -> Void) {
        let waiters = state.withLock { state in
            body(&state.snapshot)
            state.snapshot.version += 1
            let waiters = state.waiters
            state.waiters = [:]
            return waiters
        }
        for waiter in waiters.values { waiter.resume() }
    }

    /// Waits until something changed after version `seen` (or the gateway shuts down), at most `timeout` (nil:
    /// no limit), and returns the request as it stands then. Cancelling the calling task ends the wait.
    func wait(after seen: Int, timeout: Duration?) async -> Snapshot {
        if let timeout {
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await self.waitForChange(after: seen) }
                group.addTask { try? await Task.sleep(for: timeout) }
                await group.next()
                group.cancelAll()
            }
        } else {
            await waitForChange(after: seen)
        }
        return snapshot
    }

    private func waitForChange(after seen: Int) async {
        let waiter = state.withLock { state in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = state.withLock { state in
                    if state.snapshot.version > seen || state.snapshot.shuttingDown || Task.isCancelled {
                        return true
                    }
                    state.waiters[waiter] = continuation
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: waiter) }?.resume()
        }
    }
}
