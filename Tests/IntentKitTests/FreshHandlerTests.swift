import ConciergeExamples
import ConciergeJSON
import IntentKit
import Synchronization
import Testing

@Suite("Fresh handlers per job")
struct FreshHandlerTests {
    @Test func everyEchoJobGetsANewHandlerInstance() async throws {
        let provider = Examples.provider  // one provider, as in a worker process
        var instances: [Int64] = []
        for _ in 0..<3 {
            let job = try await runJob("Echo", .handle, body("Echo", #"{"text":"hi"}"#), provider: provider)
            let data = try #require(job.json["handle"]?["data"])
            #expect(data["jobsSeen"] == 1)
            #expect(data["text"] == "hi")
            #expect(data["worker"] == "test-worker")
            #expect(data["pid"]?.int64Value ?? 0 > 0)
            instances.append(try #require(data["instance"]?.int64Value))
        }
        #expect(Set(instances).count == 3)
    }

    @Test func lifecyclePhasesRunOnDifferentInstances() async throws {
        let provider = Examples.provider
        let confirm = try await runJob("Echo", .confirm, body("Echo", #"{"text":"x"}"#), provider: provider)
        let handle = try await runJob("Echo", .handle, confirm.json.serializedString(), provider: provider)
        let first = try #require(confirm.json["confirm"]?["data"]?["instance"]?.int64Value)
        let second = try #require(handle.json["handle"]?["data"]?["instance"]?.int64Value)
        #expect(first != second)
        #expect(handle.json["handle"]?["data"]?["jobsSeen"] == 1)
    }

    @Test func providerCallsTheFactoryForEveryJob() async throws {
        let made = Atomic<Int>(0)
        var provider = HandlerProvider()
        provider.register {
            made.add(1, ordering: .relaxed)
            return ProbeHandler()
        }
        let result = await provider.runLifecycle(ProbeIntent())
        #expect(result.phase == .handle)
        #expect(made.load(ordering: .relaxed) == 3)
        _ = await provider.run(ProbeIntent(), phase: .confirm)
        #expect(made.load(ordering: .relaxed) == 4)
    }

    @Test func echoWaitsInTheRequestedPhase() async throws {
        let clock = ContinuousClock()
        let start = clock.now
        let job = try await runJob("Echo", .handle, body("Echo", #"{"delayMs":60}"#))
        #expect(clock.now - start >= .milliseconds(60))
        #expect(job.json["handle"]?["code"] == "success")

        let quick = clock.now
        _ = try await runJob("Echo", .confirm, body("Echo", #"{"delayMs":5000}"#))  // delay is for handle
        #expect(clock.now - quick < .seconds(2))
    }

    @Test func echoBurnsCPUForTheRequestedTime() async throws {
        let clock = ContinuousClock()
        let start = clock.now
        _ = try await runJob("Echo", .resolve, body("Echo", #"{"cpuMs":40,"delayPhase":"resolve"}"#))
        #expect(clock.now - start >= .milliseconds(40))
    }

    @Test func echoDurationsOutsideTheDeclaredRangeNeverReachTheHandler() async throws {
        let resolve = try await runJob("Echo", .resolve, body("Echo", #"{"delayMs":600001,"cpuMs":-1}"#))
        #expect(resolve.outcome == .error)
        #expect(resolve.json["code"] == "out-of-range")
        let handle = try await runJob("Echo", .handle, body("Echo", #"{"delayMs":600001}"#))
        #expect(handle.json["code"] == "out-of-range")
        #expect(handle.json["handle"] == nil)
    }
}
