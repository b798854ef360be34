import IntentKit
import IntentWire
import Testing

@testable import IntentWorker

/// The worker's rules without a socket (``WorkerSession``): registration and backoff, the broker's liveness,
/// endpoint moves, draining, and RESULTs across connections. Times are plain nanoseconds.
@Suite struct WorkerSessionTests {
    static let ms: UInt64 = 1_000_000

    /// Heartbeat 100 ms, liveness 3 (broker silent after 300 ms), backoff 250 ms doubling up to 1 s, drain 2 s.
    static func session(endpoints: [String] = ["tcp://127.0.0.1:1"]) -> WorkerSession {
        var configuration = WorkerConfiguration(brokerEndpoints: endpoints, name: "w")
        configuration.heartbeatInterval = .milliseconds(100)
        configuration.heartbeatLiveness = 3
        configuration.reconnectInitialDelay = .milliseconds(250)
        configuration.reconnectMaxDelay = .seconds(1)
        configuration.drainTimeout = .seconds(2)
        var session = WorkerSession(timing: .init(configuration), endpoints: endpoints)
        session.connecting(now: 0)
        session.connected(now: 0)
        return session
    }

    static func job(_ id: UInt8) -> BrokerCommand {
        .job(
            WorkerJob(
                jobID: [0, 0, 0, 0, 0, 0, 0, id], intentType: "Echo", phase: .resolve, timeLeftMilliseconds: 1000,
                bodySize: 2))
    }

    static func result(_ id: UInt8, generation: Int, outcome: JobOutcome = .stop, last: Bool = true) -> FinishedJob {
        FinishedJob(
            generation: generation, jobID: [0, 0, 0, 0, 0, 0, 0, id], output: JobOutput(outcome: outcome, body: []),
            last: last)
    }

    @Test func aDisconnectAnsweringReadyMovesOnWithBackoffWhileOneAfterRegistrationRegistersAgainAtOnce() {
        var session = Self.session(endpoints: ["tcp://127.0.0.1:1", "tcp://127.0.0.1:2"])
        let answerToReady = session.received(.disconnect, now: 1)
        #expect(answerToReady == .reconnectElsewhere)
        #expect(!session.registered)
        let left = session.moveIfAsked(true)
        #expect(left == "tcp://127.0.0.1:1")
        #expect(session.rotation.current == "tcp://127.0.0.1:2")
        session.connecting(now: 2)
        let firstAnswer = session.received(.heartbeat, now: 3)
        #expect(firstAnswer == .none)
        #expect(session.registered)
        let laterDisconnect = session.received(.disconnect, now: 4)
        #expect(laterDisconnect == .registerAgain)
    }

    @Test func theBackoffDoublesUpToItsMaximumAndAnyAnswerOfTheBrokerResetsIt() {
        var session = Self.session()
        for expected in [500, 1000, 1000] {
            session.backoffElapsed()
            #expect(session.reconnectDelay == .milliseconds(expected))
        }
        _ = session.received(.heartbeat, now: 1)
        #expect(session.reconnectDelay == .milliseconds(250))
    }

    @Test func theBrokerIsSilentOnlyAfterTheWholeLivenessWindowWithoutAnyMessage() {
        var session = Self.session()
        let at100 = session.due(now: 100 * Self.ms)
        #expect(at100 == .heartbeat)
        let at150 = session.due(now: 150 * Self.ms)
        #expect(at150 == .nothing)  // the next heartbeat is due at 200 ms
        _ = session.received(.heartbeat, now: 250 * Self.ms)  // alive: silent only from 550 ms
        let at549 = session.due(now: 549 * Self.ms)
        #expect(at549 != .brokerSilent)
        let at550 = session.due(now: 550 * Self.ms)
        #expect(at550 == .brokerSilent)
        session.receivedAnything(now: 560 * Self.ms)  // even a message the loop could not decode
        let at700 = session.due(now: 700 * Self.ms)
        #expect(at700 != .brokerSilent)
    }

    @Test func aHandshakeCompletedLateStartsTheSilenceWindowAgainUntilTheBrokerAnswers() {
        var session = Self.session()
        session.handshakeSucceeded(now: 290 * Self.ms)
        #expect(session.brokerExpiry == 590 * Self.ms)
        _ = session.received(.heartbeat, now: 300 * Self.ms)
        session.handshakeSucceeded(now: 400 * Self.ms)  // registered: only messages count now
        #expect(session.brokerExpiry == 600 * Self.ms)
    }

    @Test func onlyAConnectionThatCompletedItsHandshakeCountsAsDropped() {
        var session = Self.session()
        let beforeHandshake = session.disconnected(now: 1)
        #expect(!beforeHandshake)
        session.handshakeSucceeded(now: 2)
        let afterHandshake = session.disconnected(now: 3)
        #expect(afterHandshake)
        let again = session.disconnected(now: 4)
        #expect(!again)
    }

    @Test func resultsOfAReplacedConnectionAreDroppedAndFreeTheirSlotsOnlyWithTheirLastResult() {
        var session = Self.session()
        _ = session.received(Self.job(1), now: 1)
        _ = session.received(Self.job(2), now: 1)
        #expect(session.running == 2)
        let old = session.generation
        session.connecting(now: 2)
        session.connected(now: 2)
        _ = session.received(Self.job(3), now: 3)
        let queue = session.resultsToSend([
            Self.result(1, generation: old, outcome: .continue, last: false), Self.result(1, generation: old),
            Self.result(3, generation: session.generation),
        ])
        #expect(queue.map(\.jobID.last) == [3])
        #expect(session.droppedResults == 2)
        #expect(session.running == 2)  // job 1 freed; job 2 has not answered; job 3 is to be sent
        session.resultSent(queue[0])
        #expect(session.running == 1)
    }

    @Test func refusedResultsGoFirstNextTime() {
        var session = Self.session()
        for id: UInt8 in 1...3 { _ = session.received(Self.job(id), now: 1) }
        let first = session.resultsToSend([Self.result(1, generation: 1), Self.result(2, generation: 1)])
        session.resultSent(first[0])
        session.resultsRefused(first[1...])
        let next = session.resultsToSend([Self.result(3, generation: 1)])
        #expect(next.map(\.jobID.last) == [2, 3])
        #expect(session.unsent.isEmpty)
    }

    @Test func aCancelReachesOnlyAJobThatHasNotAnswered() {
        var session = Self.session()
        _ = session.received(Self.job(1), now: 1)
        _ = session.received(Self.job(2), now: 1)
        #expect(
            session.received(.cancel(jobID: [0, 0, 0, 0, 0, 0, 0, 1]), now: 2) == .cancel([0, 0, 0, 0, 0, 0, 0, 1]))
        let answeredJob = session.shouldCancel([0, 0, 0, 0, 0, 0, 0, 1], answered: true)
        #expect(!answeredJob)
        let queue = session.resultsToSend([Self.result(2, generation: 1)])
        session.resultsRefused(queue[...])  // answered, waiting to be sent
        let unsentJob = session.shouldCancel([0, 0, 0, 0, 0, 0, 0, 2], answered: false)
        #expect(!unsentJob)
        let runningJob = session.shouldCancel([0, 0, 0, 0, 0, 0, 0, 1], answered: false)
        #expect(runningJob)
        #expect(session.cancelledJobs == 1)
    }

    @Test func aDrainEndsWhenItsJobsAnsweredAndTheBrokerAcknowledgedOrAtItsTimeout() {
        var session = Self.session()
        _ = session.received(Self.job(1), now: 1)
        session.beginDrain(now: 10)
        #expect(!session.isOver(now: 11, connected: true))
        _ = session.received(.drain, now: 12)
        #expect(!session.isOver(now: 13, connected: true))  // job 1 still runs
        let whileDraining = session.received(.disconnect, now: 14)
        #expect(whileDraining == .none)  // draining: no new registration
        session.resultSent(Self.result(1, generation: 1))
        #expect(session.isOver(now: 15, connected: true))

        var late = Self.session()
        _ = late.received(Self.job(1), now: 1)
        late.beginDrain(now: 10)
        #expect(!late.isOver(now: 10 + 2_000 * Self.ms - 1, connected: true))
        #expect(late.isOver(now: 10 + 2_000 * Self.ms, connected: true))
    }

    @Test func aRefusedDefinitionStopsTheWorkerOnceItsRunningJobsAnswered() {
        var session = Self.session()
        _ = session.received(Self.job(1), now: 1)
        let reaction = session.received(
            .error(code: WireErrorCode.definitionMismatch.rawValue, message: "Echo differs"), now: 2)
        #expect(reaction == .stop(message: "Echo differs"))
        #expect(session.failure?.code == .definitionRefused)
        #expect(!session.isOver(now: 3, connected: true))
        session.resultSent(Self.result(1, generation: 1))
        #expect(session.isOver(now: 4, connected: true))
        #expect(
            session.received(.error(code: "malformed", message: "x"), now: 5)
                == .reportError(code: "malformed", message: "x"))
    }

    @Test func unsupportedVersionAnsweringReadyFallsBackToVersion5OnceAndForGood() {
        var session = Self.session()
        #expect(session.version == 6)
        let unsupported = BrokerCommand.error(
            code: WireErrorCode.unsupportedVersion.rawValue, message: "this broker speaks CIPW01 to CIPW05")
        #expect(session.received(unsupported, now: 1) == .fallBack(message: "this broker speaks CIPW01 to CIPW05"))
        #expect(session.version == 5)
        // Registered in version 05: the same error about a later message is only reported, and the version stays.
        session.connecting(now: 2)
        session.connected(now: 2)
        _ = session.received(.heartbeat, now: 3)
        #expect(
            session.received(unsupported, now: 4)
                == .reportError(code: "unsupported-version", message: unsupported.text))
        #expect(session.version == 5)
        // After registration in version 06, unsupported-version (about some other message) does not downgrade.
        var registered = Self.session()
        _ = registered.received(.heartbeat, now: 1)
        #expect(
            registered.received(unsupported, now: 2)
                == .reportError(code: "unsupported-version", message: unsupported.text))
        #expect(registered.version == 6)
    }
}

extension BrokerCommand {
    /// An ERROR's message (tests).
    fileprivate var text: String {
        if case .error(_, let message) = self { return message }
        return ""
    }
}
