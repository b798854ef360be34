import IntentJournal
import IntentWire
import PropertyBased
import Testing

@testable import IntentBroker

/// Randomized event sequences (with workers of all three protocol versions, and CANCELs): after every step the core's
/// invariants hold (the harness checks them: queue counts, capacities, the request and worker tables, timers,
/// attached duplicates, idempotency records and requests being cancelled), and in the end
/// every request (with or without an idempotency key) got exactly one ending, at most one progress before it, and no
/// handle job ran twice.
@Suite struct RandomizedRuleTests {
    static let configuration = BrokerConfiguration(
        defaultDeadline: .milliseconds(1000), hardLimit: .milliseconds(3000), heartbeatInterval: .milliseconds(100),
        resultTTL: .seconds(2), maxQueuedRequests: 6, maxQueuedPerIntentType: 4,
        workerGracePeriod: .milliseconds(300), shutdownGracePeriod: .milliseconds(500))
    static let workerTypes = [["A"], ["A", "B"], ["B"]]

    @Test func everyRequestEndsExactlyOnceWhateverHappens() async throws {
        await propertyCheck(count: 300, input: Gen.int(in: 0...9_999).array(of: 1...150)) { steps in
            do {
                try Self.run(steps)
            } catch {
                Issue.record(error)
            }
        }
    }

    /// The same with whole lifecycles chained on version-03 workers (section 5.15): a lost worker may have
    /// started handle, and no handle runs twice.
    @Test func everyRequestEndsExactlyOnceWithLifecyclesChainedThroughHandle() async throws {
        await propertyCheck(count: 200, input: Gen.int(in: 0...9_999).array(of: 1...150)) { steps in
            do {
                try Self.run(steps, chainEnd: .handle)
            } catch {
                Issue.record(error)
            }
        }
    }

    /// With `journaling`, the broker also crashes and restarts from its journal now and then (nothing else
    /// survives), and the harness checks that every batch's JOBs and REPLYs were recorded first. `chainEnd` is the
    /// broker's ``BrokerConfiguration/lifecycleChainEnd``.
    static func run(
        _ steps: [Int], journaling: Bool = false, label: String = "", chainEnd: RequestPhase = .confirm
    ) throws {
        var configuration = configuration
        configuration.lifecycleChainEnd = chainEnd
        var broker = try CoreHarness(configuration, journaling: journaling)
        var sent: [(client: String, id: String)] = []
        for (index, step) in steps.enumerated() {
            // A broker that stopped (it lost its journal to another) is started again on the journal.
            if broker.stopped != nil { try broker.restart() }
            let kind = step % 12
            let choice = step / 12
            let worker = "w\(choice % 3)"
            switch kind {
            case 0, 1, 2:
                let id = "r\(index)"
                let client = "c\(choice % 2)"
                let phase = [RequestPhase.resolve, .confirm, .handle, .lifecycle][choice / 2 % 4]
                let deadline = [nil, 100, 500, 2000][choice / 8 % 4]
                // A third of them without an idempotency key; the rest share four keys and two bodies, so that
                // duplicates attach, completed keys replay, other bodies conflict and lost attempts are retried.
                let key = choice / 64 % 3 == 0 ? nil : "k\(choice / 5 % 4)"
                let body = choice / 7 % 2 == 0 ? "{}" : #"{"x":1}"#
                if choice / 128 % 4 == 3 {
                    // A conversation's turn: a new one, an answer, a confirm, a retry or one out of turn.
                    let number = choice / 3 % 3 + 1
                    let bodies = [
                        #"{"intent":{"type":"A","parameters":{}}}"#, #"{"parameter":"x","value":1}"#,
                        #"{"confirm":true}"#,
                    ]
                    broker.turn(
                        id, conversation: "v\(choice % 3)", number: number,
                        body: number == 1 ? bodies[0] : bodies[choice / 5 % 2 + 1],
                        flags: choice / 11 % 2 == 0 ? [] : [.confirm], deadlineMs: deadline, client: client)
                    sent.append((client, id))
                    continue
                }
                broker.send(
                    id, type: choice / 32 % 2 == 0 ? "A" : "B", phase: phase, deadlineMs: deadline, client: client,
                    body: body, key: key)
                sent.append((client, id))
            case 3, 4:
                guard broker.jobs[worker]?.isEmpty == false else { continue }
                let outcome = [WorkerResult.Outcome.continue, .stop, .error, .cancelled][choice / 3 % 4]
                broker.answer(worker, outcome: outcome)
            case 5:
                broker.jobs[worker] = nil  // a new incarnation: the old one's jobs are gone with it
                broker.register(
                    worker, capacity: choice % 3 + 1, types: workerTypes[choice % 3], version: UInt8(choice / 3 % 3 + 1)
                )
            case 6:
                if broker.core.isRegistered(Array(worker.utf8)) { broker.worker(worker, sends: .disconnect) }
            case 7:
                if broker.core.isRegistered(Array(worker.utf8)) { broker.worker(worker, sends: .drain) }
            case 8:
                for name in ["w0", "w1", "w2"] where broker.core.isRegistered(Array(name.utf8)) {
                    broker.worker(name, sends: .heartbeat)
                }
            case 9:
                broker.advance(ms: [10, 60, 200, 400][choice % 4])
            case 10:
                broker.blocked.remove(worker)
                broker.unreachable.remove(worker)
                if choice / 3 % 3 == 1 { broker.blocked.insert(worker) }
                if choice / 3 % 3 == 2 { broker.unreachable.insert(worker) }
            default:
                if journaling && choice % 9 == 4 {
                    try broker.restart()
                } else if journaling && choice % 9 >= 5 && choice % 9 <= 7 {
                    try Self.journalEvent(choice / 9, &broker)
                } else if choice % 9 == 0 {
                    broker.shutdown(finish: false)
                } else if choice % 9 <= 3, !sent.isEmpty {
                    let request = sent[choice % sent.count]
                    broker.cancel(request.id, client: request.client)
                } else if let request = sent.last {
                    broker.status(request.id, client: request.client)
                }
            }
        }
        if journaling {
            // The database is back and the broker works again (a broker that stopped or stood by is started again
            // on the journal); the workers it sent away register again.
            broker.holdCommits = false
            broker.databaseDown = false
            broker.finishCommit()
            if broker.core.journalLink.hasFailed || broker.core.journalLink.isStandingBy { try broker.restart() }
            broker.journalTaken = false
            broker.advance(ms: 1000)
            for (index, name) in ["w0", "w1", "w2"].enumerated() where !broker.core.isRegistered(Array(name.utf8)) {
                broker.jobs[name] = nil
                broker.register(name, capacity: 2, types: workerTypes[index], version: UInt8(index + 1))
            }
        }
        // Let everything finish: workers answer what they hold and stay alive until nothing is in flight.
        broker.blocked = []
        broker.unreachable = []
        var rounds = 0
        while !broker.core.requests.isEmpty && rounds < 100 {
            rounds += 1
            for name in ["w0", "w1", "w2"] {
                while broker.jobs[name]?.isEmpty == false { broker.answer(name) }
                if broker.core.isRegistered(Array(name.utf8)) { broker.worker(name, sends: .heartbeat) }
            }
            if rounds == 50 { broker.shutdown(finish: true) }
            broker.advance(ms: 100)
        }
        #expect(broker.core.requests.isEmpty)
        #expect(broker.queued == 0)
        for request in sent {
            let replies = broker.replies(to: request.id, client: request.client)
            if broker.unanswered.contains("\(request.client)/\(request.id)") {
                // Its answer was dropped with a commit that failed (its client sends it again).
                #expect(replies.filter(\.isEnding).count <= 1, "\(label) \(request.id): \(replies)")
            } else {
                #expect(replies.filter(\.isEnding).count == 1, "\(label) \(request.id): \(replies)")
                #expect(replies.last?.isEnding == true, "\(request.id): \(replies)")
            }
            #expect(replies.filter { $0.status == .progress }.count <= 1, "\(label) \(request.id): \(replies)")
        }
        let handleJobs = (broker.delivered + broker.chained).filter { $0.phase == .handle }.map(\.request)
        #expect(Set(handleJobs).count == handleJobs.count, "a handle job was sent twice")
    }

    /// A random event of the journal link: commits held in flight or written, a commit that fails, a database that
    /// goes away or comes back (its journal perhaps taken over by another broker meanwhile).
    static func journalEvent(_ choice: Int, _ broker: inout CoreHarness) throws {
        switch choice % 8 {
        case 0, 1:
            broker.holdCommits.toggle()
            if !broker.holdCommits { broker.finishCommit() }
        case 2, 3:
            broker.finishCommit()
        case 4:
            broker.finishCommit(failing: .unavailable)
            broker.endTurn()
        case 5:
            broker.databaseDown = true
            broker.endTurn()
        default:
            broker.databaseDown = false
            broker.journalTaken = choice % 8 == 6 && choice / 8 % 3 == 0
            broker.advance(ms: 1000)
        }
    }

    @Test func timersFireInDeadlineOrder() async throws {
        await propertyCheck(count: 200, input: Gen.int(in: 10...3000).array(of: 1...40)) { deadlines in
            do {
                var broker = try CoreHarness(.init(hardLimit: .seconds(10)))
                broker.register("w", capacity: 1)
                broker.send("holder", deadlineMs: 10_000)  // keeps the only worker busy: nothing else starts
                for (index, deadline) in deadlines.enumerated() { broker.send("q\(index)", deadlineMs: deadline) }
                broker.checkInvariants = false
                for _ in 0..<320 {
                    broker.advance(ms: 10)
                    broker.worker("w", sends: .heartbeat)
                }
                let shed = broker.replies.filter { $0.id.hasPrefix("q") }.map(\.id)
                let expected = deadlines.enumerated().sorted { lhs, rhs in
                    let left = Self.actAt(lhs.element)
                    let right = Self.actAt(rhs.element)
                    return left == right ? lhs.offset < rhs.offset : left < right
                }.map { "q\($0.offset)" }
                #expect(shed == expected)
            } catch {
                Issue.record(error)
            }
        }
    }

    /// When a deadline of `ms` is acted on (nanoseconds after arrival): less a tenth of it, at most 50 ms.
    static func actAt(_ ms: Int) -> UInt64 {
        let nanos = UInt64(ms) * 1_000_000
        return nanos - min(nanos / 10, 50_000_000)
    }
}
