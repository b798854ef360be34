import IntentClient
import Synchronization

/// One request the gateway sent, as its HTTP routes see it: its progress reply, its ending, and the routes waiting
/// for either (a response, an event stream, a long poll).
///
/// The client hands it the request's replies on its socket thread (``receive(_:)``: no task, no stream per request),
/// so the request goes on whatever happens to the HTTP connection that started it: a caller that went away can still
/// ask for the ending with `GET /v1/requests/{id}`. The ``DeadlineSweeper`` ends it `unavailable` when no broker
/// answers by its deadline.
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

        /// The ending's code for spans: `final`, the error's code, or `open`.
        var outcome: String {
            switch ending {
            case .reply(let reply): reply.status == .final ? "final" : (reply.errorCode ?? "error")
            case .failure(let problem): problem.code
            case nil: "open"
            }
        }
    }

    private struct State {
        var snapshot = Snapshot(version: 0, progress: nil, ending: nil, shuttingDown: false)
        var waiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
        /// The route that sent it, waiting for the first reply (no dictionary for the one waiter nearly every
        /// request has).
        var firstWaiter: CheckedContinuation<Void, Never>?
        var nextWaiter: UInt64 = 0
        /// The client's handle on the request (to abandon it), once sent.
        var sent: SentRequest?
        /// The task that sends a conversation's turn (cancelling it abandons the turn at the client).
        var task: Task<Void, Never>?
        /// Abandoned before the handle was known: abandon it when it is.
        var abandonWhenSent = false
        /// ``finish()`` ran.
        var finished = false
    }

    let id: String
    let identity: GatewayIdentity
    private let state = Mutex(State())
    /// Runs once when the request is over for the gateway (its replies are over, or it was given up): forget it
    /// later, end its span.
    private let onFinish: (@Sendable (TrackedRequest) -> Void)?

    init(id: String, identity: GatewayIdentity, onFinish: (@Sendable (TrackedRequest) -> Void)? = nil) {
        self.id = id
        self.identity = identity
        self.onFinish = onFinish
    }

    /// The client's handle on the request, once sent.
    func attach(_ sent: SentRequest) {
        let abandon = state.withLock { state in
            state.sent = sent
            return state.abandonWhenSent
        }
        if abandon { sent.abandon() }
    }

    /// The task that sends the request (a conversation's turn), to cancel when it is given up.
    func attach(_ task: Task<Void, Never>) {
        let cancel = state.withLock { state in
            state.task = task
            return state.abandonWhenSent
        }
        if cancel { task.cancel() }
    }

    /// An event of the client's handler (on its socket thread).
    func receive(_ event: ReplyEvent) {
        switch event {
        case .reply(let reply):
            record(reply)
        case .ended:
            end(
                .failure(
                    GatewayProblem(code: "connection-lost", detail: "the request ended without a reply", requestID: id)
                ))
            finish()
        case .failed(let error):
            end(.failure(Gateway.problem(error, requestID: id)))
            finish()
        }
    }

    /// Whether a reply (progress or ending) came, or the request ended otherwise.
    var hasReply: Bool { state.withLock { $0.snapshot.progress != nil || $0.snapshot.ending != nil } }

    /// No broker answered by the deadline: ends the request `unavailable` (503, `Retry-After: 1`) and abandons it
    /// at the client, so that it never runs later.
    func unavailable() {
        end(
            .failure(
                GatewayProblem(
                    code: "unavailable",
                    detail: "no broker answered within the request's deadline, and the gateway cancelled it: send it "
                        + "again with the same Idempotency-Key (so that it never runs twice) when /readyz answers 200",
                    requestID: id, retryAfterSeconds: 1)))
        let (sent, task) = state.withLock { state -> (SentRequest?, Task<Void, Never>?) in
            if state.sent == nil && state.task == nil { state.abandonWhenSent = true }
            return (state.sent, state.task)
        }
        sent?.abandon()
        task?.cancel()
        finish()
    }

    /// The request is over for the gateway: ``onFinish`` runs once.
    private func finish() {
        let first = state.withLock { state -> Bool in
            defer { state.finished = true }
            return !state.finished
        }
        if first { onFinish?(self) }
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
        let (first, waiters) = state.withLock { state in
            body(&state.snapshot)
            state.snapshot.version += 1
            defer {
                state.firstWaiter = nil
                if !state.waiters.isEmpty { state.waiters = [:] }
            }
            return (state.firstWaiter, state.waiters)
        }
        first?.resume()
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

    /// The request as it stands once it has a reply (or ended, or the gateway shuts down). Cancelling the calling
    /// task does not end this wait: it is bounded by the request's deadline (``DeadlineSweeper``), and it saves the
    /// cancellation handler on the busiest path.
    func firstReply() async -> Snapshot {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = state.withLock { state in
                if state.snapshot.version > 0 || state.snapshot.shuttingDown { return true }
                if state.firstWaiter == nil {
                    state.firstWaiter = continuation
                } else {
                    state.nextWaiter += 1
                    state.waiters[state.nextWaiter] = continuation
                }
                return false
            }
            if now { continuation.resume() }
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
