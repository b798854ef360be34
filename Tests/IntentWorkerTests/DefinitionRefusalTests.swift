import IntentKit
import Logging
import Testing

@testable import IntentWorker

/// PROTOCOL.md section 5.16: a worker whose READY is answered ERROR `definition-mismatch` stops with
/// ``WorkerError/Code/definitionRefused`` (registering again would be refused again), where any other ERROR is only
/// logged.
@Suite(.serialized, .timeLimit(.minutes(2))) struct DefinitionRefusalTests {
    typealias V2 = WorkerVersion2Tests

    @Test func aRefusedDefinitionStopsTheWorkerWithItsReason() async throws {
        let setup = try await V2.start(.workerThread)
        defer { setup.broker.close() }
        try setup.broker.send(["CIPW06", "ERROR", "definition-mismatch", "the definition of Wait differs"])
        do {
            try await setup.run.value
            Issue.record("the worker ran on after its definition was refused")
        } catch let error as WorkerError {
            #expect(error.code == .definitionRefused)
            #expect(error.message == "the definition of Wait differs")
        }
    }

    @Test func anotherErrorIsOnlyLogged() async throws {
        let setup = try await V2.start(.workerThread)
        try setup.broker.send(["CIPW06", "ERROR", "malformed", "something else"])
        try await V2.waitUntil("the error is logged") {
            !setup.log.metadata(of: "broker reported an error").isEmpty
        }
        try await V2.stop(setup)  // still running: it drains and leaves as usual
    }
}
