import IntentJournal
import IntentWire
import Testing

@testable import IntentBroker

/// The journal link as the core runs it (`Docs/JOURNAL.md`): commits pipelined with the loop, a failed commit, a
/// database that goes away and comes back, a journal another broker took over, and STATS, all without sockets.
@Suite struct JournalLinkRuleTests {
    static let lostBeforeAcceptance =
        "the broker lost its journal's database before it could accept this request; send it again"

    @Test func nothingLeavesBeforeItsCommitIsWrittenAndWhatIsDecidedMeanwhileGoesIntoTheNextCommit() throws {
        var broker = try CoreHarness(journaling: true)
        broker.register("w1", capacity: 2)
        broker.holdCommits = true
        broker.send("a")
        #expect(broker.core.journalLink.isCommitting)
        #expect(broker.delivered.isEmpty, "a JOB left before its request was recorded")
        broker.send("b")
        #expect(broker.delivered.isEmpty)
        #expect(broker.journal?.open.count ?? 0 == 0)
        broker.finishCommit()
        // a's JOB leaves; b, decided while a's commit was written, is in the next commit and still waits.
        #expect(broker.delivered.map(\.request) == ["a"])
        #expect(broker.core.journalLink.isCommitting)
        broker.finishCommit()
        #expect(broker.delivered.map(\.request) == ["a", "b"])
        #expect(broker.journal?.open.count == 2)
        #expect(!broker.core.journalLink.isCommitting)
    }

    @Test func aFailedCommitRefusesItsRequestsUnavailableAndDropsWhatWaitedOnIt() throws {
        var broker = try CoreHarness(.init(hardLimit: .seconds(60)), journaling: true)
        broker.register("w1", capacity: 2)
        broker.send("a", phase: .resolve, deadlineMs: 30_000)
        #expect(broker.delivered.map(\.request) == ["a"])
        broker.holdCommits = true
        broker.send("b", deadlineMs: 30_000)
        broker.answer("w1", request: "a", outcome: .continue)
        broker.finishCommit(failing: .unavailable)
        broker.endTurn()
        // b was never recorded: never accepted. a's ending was not recorded: not sent, and a runs again later.
        #expect(broker.endings(of: "b").map(\.code) == ["unavailable"])
        #expect(broker.endings(of: "b").first?.body.contains(Self.lostBeforeAcceptance) == true)
        #expect(broker.endings(of: "a").isEmpty)
        #expect(broker.delivered.map(\.request) == ["a"])
        #expect(broker.controls.contains { $0.worker == "w1" && $0.control == .disconnect })
        #expect(broker.core.journalLink.isUnavailable)
        #expect(broker.linkActions.last == .close)
        // Meanwhile nothing is accepted; PING is answered.
        broker.send("c")
        #expect(broker.endings(of: "c").map(\.code) == ["unavailable"])
        broker.status("a")
        #expect(broker.replies.last?.command == .status && broker.replies.last?.code == "unavailable")
        broker.core.ping(client: Array("c1".utf8))
        broker.settle()
        #expect(broker.pongs == ["c1"])
        broker.register("w1", capacity: 2)
        #expect(broker.controls.last?.control == .disconnect && !broker.core.isRegistered(Array("w1".utf8)))
        // The database is back: the journal is opened again, and a runs again from what it holds.
        broker.holdCommits = false
        broker.advance(ms: 1000)
        #expect(broker.core.journalLink.state == .idle)
        broker.register("w1", capacity: 2)
        #expect(broker.jobIDs("w1") == ["a"])
        broker.answer("w1", outcome: .continue, body: #"{"resolved":1}"#)
        #expect(broker.endings(of: "a").map(\.body) == [#"{"resolved":1}"#])
    }

    @Test func aFailedCommitOfAFileJournalStopsTheBrokerWithoutActingOnWhatWaited() throws {
        var configuration = BrokerConfiguration()
        configuration.journalPath = "/tmp/journal.sqlite"
        var broker = try CoreHarness(configuration, journaling: true)
        broker.register("w1")
        broker.holdCommits = true
        broker.send("a")
        broker.finishCommit(failing: .io)
        broker.endTurn()
        guard case .stop(let error) = broker.linkActions.last else {
            Issue.record("the broker did not stop: \(broker.linkActions)")
            return
        }
        #expect(error.code == .io)
        #expect(broker.delivered.isEmpty && broker.replies.isEmpty)
        broker.send("b")
        #expect(broker.replies.isEmpty, "a failed broker acted on something it could not record")
    }

    @Test func anUnreachableDatabaseIsNoticedByTheLeadershipCheckAndTriedAgainEverySecond() throws {
        var broker = try CoreHarness(journaling: true)
        broker.advance(ms: 500)
        #expect(broker.linkActions.last == .sync(checkLeadership: false))
        broker.advance(ms: 600)
        #expect(broker.linkActions.last == .sync(checkLeadership: true))
        broker.databaseDown = true
        broker.advance(ms: 1000)
        #expect(broker.core.journalLink.isUnavailable)
        broker.linkActions = []
        broker.advance(ms: 500)
        #expect(!broker.linkActions.contains(.reopen))
        broker.advance(ms: 500)
        #expect(broker.linkActions.contains(.reopen) && broker.core.journalLink.isUnavailable)
        broker.databaseDown = false
        broker.advance(ms: 999)
        #expect(broker.core.journalLink.isUnavailable)
        broker.advance(ms: 1)
        #expect(broker.core.journalLink.state == .idle)
    }

    @Test func aBrokerThatLostItsJournalToAnotherStandsByAndTakesOverWhenTheLockIsFree() throws {
        var configuration = BrokerConfiguration(hardLimit: .seconds(60))
        configuration.standby = true
        var broker = try CoreHarness(configuration, journaling: true)
        broker.register("w1")
        broker.send("a", phase: .resolve, deadlineMs: 30_000)
        broker.databaseDown = true
        broker.advance(ms: 1000)
        broker.databaseDown = false
        broker.journalTaken = true
        broker.advance(ms: 1000)
        #expect(broker.linkActions.last == .standBy)
        #expect(broker.core.journalLink.isStandingBy)
        // The lock is free again: this broker takes over with what the journal holds.
        broker.journalTaken = false
        #expect(broker.openJournal() == .none)
        #expect(broker.core.journalLink.state == .idle)
        #expect(broker.core.requests.count == 1)
    }

    @Test func aBrokerWithoutStandbyThatLostItsJournalStops() throws {
        var broker = try CoreHarness(journaling: true)
        broker.databaseDown = true
        broker.advance(ms: 1000)
        broker.databaseDown = false
        broker.journalTaken = true
        broker.advance(ms: 1000)
        guard case .stop(let error) = broker.linkActions.last else {
            Issue.record("the broker did not stop: \(broker.linkActions)")
            return
        }
        #expect(error.code == .locked)
    }

    @Test func statsAreAnsweredByTheCoreInTheQuerysVersionWithItsState() throws {
        var broker = try CoreHarness(journaling: true)
        broker.register("w1", capacity: 2, types: ["Echo"], version: 2)
        broker.send("a")
        broker.stats(from: "peer", version: 3)
        var stats = try Self.lastStats(broker, to: "peer")
        #expect(stats.state == "active" && stats.requestsInFlight == 1)
        #expect(stats.workers.map(\.intents) == [["Echo"]])
        broker.databaseDown = true
        broker.advance(ms: 1000)
        broker.stats(from: "peer")
        stats = try Self.lastStats(broker, to: "peer")
        #expect(stats.state == "unavailable" && stats.requestsInFlight == 0 && stats.workers.isEmpty)
        broker.shutdown(finish: false)
        broker.stats(from: "peer")
        #expect(try Self.lastStats(broker, to: "peer").state == "stopping")
    }

    static func lastStats(_ broker: borrowing CoreHarness, to peer: String) throws -> BrokerStats {
        guard let last = broker.controls.last, last.worker == peer, case .stats(let body) = last.control else {
            throw StatsMissing()
        }
        return try BrokerStats(parsing: body)
    }

    struct StatsMissing: Error {}
}
