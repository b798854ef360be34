import ConciergeJSON
import IntentWire
import Testing

@testable import IntentBroker

/// Section 5.18: a request runs every job on a worker serving the definition it was admitted under (the version it
/// asked for, else the oldest served) or a compatible later one; so does every turn of a conversation.
@Suite struct DefinitionPinningRuleTests {
    /// Echo version 1: one optional string.
    static let v1 = #"[{"name": "text", "type": "string", "list": false, "required": false}]"#
    /// Version 2, compatible: a new optional parameter.
    static let v2 =
        #"[{"name": "text", "type": "string", "list": false, "required": false}, "#
        + #"{"name": "shout", "type": "boolean", "list": false, "required": false}]"#
    /// Version 3, breaking: `text` is an integer now.
    static let v3 = #"[{"name": "text", "type": "integer", "list": false, "required": false}]"#

    private func definition(_ parameters: String, version: Int) throws -> AnnouncedDefinition {
        try AnnouncedDefinition(
            frame: Array(#"{"intent": "Echo", "parameters": \#(parameters), "version": \#(version)}"#.utf8),
            intentType: "Echo")
    }

    private func register(_ broker: inout CoreHarness, _ name: String, _ definition: AnnouncedDefinition) {
        let ready = WorkerReady(
            capacity: 1, name: Array(name.utf8), intentTypes: [Array("Echo".utf8)], version: 6,
            definitions: [definition])
        broker.core.workerMessage(.ready(ready), from: Array(name.utf8), resultBody: nil, now: broker.now)
        broker.settle()
    }

    @Test func aRequestThatAsksForTheNewVersionRunsOnlyOnItsWorkers() throws {
        var broker = try CoreHarness()
        register(&broker, "old", try definition(Self.v1, version: 1))
        register(&broker, "new", try definition(Self.v2, version: 2))
        // Both idle: a request asking for version 2 never goes to the version-1 worker, however the round robin
        // stands.
        for index in 0..<4 {
            broker.send("v2-\(index)", phase: .resolve, definitionVersion: 2)
            #expect(broker.jobIDs("old").isEmpty)
            #expect(broker.jobIDs("new") == ["v2-\(index)"])
            broker.answer("new")
        }
    }

    @Test func aRequestOfTheOldVersionRunsOnACompatibleNewWorkerToo() throws {
        var broker = try CoreHarness()
        register(&broker, "old", try definition(Self.v1, version: 1))
        register(&broker, "new", try definition(Self.v2, version: 2))
        broker.send("a", phase: .resolve)
        broker.send("b", phase: .resolve)
        // Pinned to version 1 (the oldest served); version 2 may serve it: both workers take one.
        #expect(broker.jobIDs("old").count == 1 && broker.jobIDs("new").count == 1)
    }

    @Test func aBreakingVersionIsServedSideBySideAndNeverGetsTheOldVersionsRequests() throws {
        var broker = try CoreHarness()
        register(&broker, "old", try definition(Self.v1, version: 1))
        register(&broker, "breaking", try definition(Self.v3, version: 3))
        broker.send("a", phase: .resolve)
        broker.send("b", phase: .resolve)
        // Both pinned to version 1: the version-3 worker may not run them, so b waits for the old worker.
        #expect(broker.jobIDs("old") == ["a"])
        #expect(broker.jobIDs("breaking").isEmpty)
        broker.send("c", phase: .resolve, definitionVersion: 3)
        #expect(broker.jobIDs("breaking") == ["c"])
        broker.answer("old")
        #expect(broker.jobIDs("old") == ["b"])
        #expect(broker.endings(of: "b").isEmpty)
    }

    @Test func aWorkerSkipsAQueuedRequestItMayNotRunAndTakesTheNextOne() throws {
        var broker = try CoreHarness()
        register(&broker, "old", try definition(Self.v1, version: 1))
        register(&broker, "new", try definition(Self.v2, version: 2))
        broker.send("busy-old", phase: .resolve, definitionVersion: 1)
        broker.send("busy-new", phase: .resolve, definitionVersion: 2)
        // Both slots taken: a version-2 request, then a version-1 one, wait.
        broker.send("wants-2", phase: .resolve, definitionVersion: 2)
        broker.send("wants-1", phase: .resolve, definitionVersion: 1)
        #expect(broker.core.queuedCount == 2)
        // The old worker frees its slot: it skips the head (version 2) and takes the version-1 request.
        broker.answer("old")
        #expect(broker.jobIDs("old") == ["wants-1"])
        broker.answer("new")
        #expect(broker.jobIDs("new") == ["wants-2"])
        #expect(broker.core.queuedCount == 0)
    }

    @Test func everyPhaseOfALifecycleStaysOnItsVersion() throws {
        var configuration = BrokerConfiguration()
        configuration.lifecycleChainEnd = .resolve  // one job per phase, so each phase picks its worker
        var broker = try CoreHarness(configuration)
        register(&broker, "old", try definition(Self.v1, version: 1))
        register(&broker, "breaking", try definition(Self.v3, version: 3))
        broker.send("life", phase: .lifecycle)
        #expect(broker.jobIDs("old") == ["life"])
        // Its resolve is done; the old worker leaves before confirm. The breaking version may not run confirm: the
        // request waits for a worker of its own version rather than run on another definition.
        broker.answer("old", outcome: .continue, body: #"{"resolve": {}}"#)
        #expect(broker.jobIDs("old") == ["life"])
        broker.worker("old", sends: .disconnect)
        #expect(broker.jobIDs("breaking").isEmpty)
        register(&broker, "old-again", try definition(Self.v1, version: 1))
        #expect(broker.jobIDs("old-again") == ["life"])
    }

    @Test func aVersionNobodyServesIsRefusedUnknownIntent() throws {
        var broker = try CoreHarness()
        register(&broker, "old", try definition(Self.v1, version: 1))
        broker.send("v9", phase: .resolve, definitionVersion: 9)
        let ending = try #require(broker.endings(of: "v9").first)
        #expect(ending.code == "unknown-intent")
        #expect(ending.body.contains("version 9") && ending.body.contains("served: 1"), "\(ending.body)")
    }

    @Test func aConversationsTurnsRunOnTheVersionItStartedOn() throws {
        var broker = try CoreHarness()
        register(&broker, "old", try definition(Self.v1, version: 1))
        broker.turn(
            "t1", conversation: "conv", number: 1, body: #"{"intent": {"type": "Echo", "parameters": {}}}"#)
        #expect(broker.jobIDs("old") == ["t1"])
        // A breaking version arrives and the old worker is busy: the conversation's next turn still waits for it.
        register(&broker, "breaking", try definition(Self.v3, version: 3))
        let pin = broker.core.conversations[ConversationKey(scope: Array("c1".utf8), id: Array("conv".utf8))]?.pin
        #expect(pin?.version == 1)
    }
}
