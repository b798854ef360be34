import ConciergeJSON
import IntentWire
import Testing

@testable import IntentBroker

/// Sections 5.16 and 5.18: the broker serves one definition per intent type and version; a worker announcing another
/// definition under a version already served is refused, one announcing another version is served beside it.
@Suite struct DefinitionRuleTests {
    private func definition(_ parameters: String, version: Int? = nil) throws -> AnnouncedDefinition {
        let versionMember = version.map { #", "version": \#($0)"# } ?? ""
        return try AnnouncedDefinition(
            frame: Array(#"{"intent": "Echo", "parameters": \#(parameters)\#(versionMember)}"#.utf8),
            intentType: "Echo")
    }

    private func register(_ broker: inout CoreHarness, _ name: String, _ definition: AnnouncedDefinition?) {
        let ready = WorkerReady(
            capacity: 1, name: Array(name.utf8), intentTypes: [Array("Echo".utf8)],
            version: definition == nil ? 3 : 4, definitions: definition.map { [$0] } ?? [])
        broker.core.workerMessage(.ready(ready), from: Array(name.utf8), resultBody: nil, now: broker.now)
        broker.settle()
    }

    private func refusal(_ broker: borrowing CoreHarness, to worker: String) -> String? {
        for entry in broker.controls.reversed() where entry.worker == worker {
            if case .error(let code, let message) = entry.control, code == .definitionMismatch { return message }
        }
        return nil
    }

    private func served(_ broker: borrowing CoreHarness) -> [(digest: String, workers: [String])] {
        let type = broker.core.intentTypeIndex[ByteKey(Array("Echo".utf8))]!
        return broker.core.intentTypes[type].definitions.map { served in
            (served.definition.digest, served.workers.compactMap { broker.core.workers[$0]?.name })
        }
    }

    @Test func workersOfTheSameDefinitionShareIt() throws {
        var broker = try CoreHarness()
        let echo = try definition("[]")
        register(&broker, "w1", echo)
        register(&broker, "w2", try definition(" [ ] "))  // the same, written otherwise
        #expect(broker.core.workers.count == 2)
        #expect(served(broker).map(\.workers) == [["w1", "w2"]])
        #expect(served(broker).first?.digest == echo.digest)
    }

    @Test func anotherDefinitionUnderTheSameVersionIsRefusedAndTheWorkerNotRegistered() throws {
        var broker = try CoreHarness()
        register(&broker, "w1", try definition("[]"))
        register(&broker, "w2", try definition(#"[{"name": "text"}]"#))
        #expect(broker.core.workers.count == 1)
        #expect(broker.core.statistics.definitionRefusals == 1)
        let refused = refusal(broker, to: "w2")
        let message = try #require(refused)
        #expect(message.contains("Echo") && message.contains("same version") && message.contains("w1"))
        #expect(served(broker).map(\.workers) == [["w1"]])
        // The refused worker gets no job.
        broker.send("r", phase: .resolve)
        #expect(broker.jobIDs("w1") == ["r"])
    }

    @Test func anotherVersionIsServedSideBySideWithoutAFlag() throws {
        var broker = try CoreHarness()
        register(&broker, "w1", try definition("[]"))
        register(&broker, "w2", try definition(#"[{"name": "text"}]"#, version: 2))
        #expect(broker.core.workers.count == 2)
        #expect(refusal(broker, to: "w2") == nil)
        #expect(served(broker).map(\.workers) == [["w1"], ["w2"]])
        // The old version goes with its last worker.
        broker.worker("w1", sends: .disconnect)
        #expect(served(broker).map(\.workers) == [["w2"]])
    }

    @Test func aDefinitionIsForgottenWithItsLastWorker() throws {
        var broker = try CoreHarness()
        register(&broker, "w1", try definition("[]"))
        broker.worker("w1", sends: .disconnect)
        register(&broker, "w2", try definition(#"[{"name": "text"}]"#))
        #expect(broker.core.workers.count == 1)
        #expect(refusal(broker, to: "w2") == nil)
    }

    @Test func aRestartedWorkerMayComeBackWithAnotherDefinition() throws {
        var broker = try CoreHarness()
        register(&broker, "w1", try definition("[]"))
        register(&broker, "w1", try definition(#"[{"name": "text"}]"#))  // the same routing id, replaced
        #expect(broker.core.workers.count == 1)
        #expect(refusal(broker, to: "w1") == nil)
        #expect(served(broker).count == 1)
    }

    @Test func workersThatAnnounceNoDefinitionRegisterBesideThem() throws {
        var broker = try CoreHarness()
        register(&broker, "w1", try definition("[]"))
        register(&broker, "old", nil)
        #expect(broker.core.workers.count == 2)
        #expect(served(broker).map(\.workers) == [["w1"]])
    }
}
