import ConciergeJSON
import Foundation
import IntentLoad
import IntentWire
import Testing

extension LoadRuns {
    /// `concierge load --idempotency`: every request is a `CIPC02` REQUEST with a fresh key in F7, and the load
    /// client understands the version-02 answers (7 frames).
    @Suite struct IdempotencyKeys {
        func configuration(_ broker: FakeBroker, keys: Bool, requests: Int = 300) -> LoadConfiguration {
            LoadConfiguration(
                endpoint: broker.endpoint, mode: .closed(concurrency: 8), connections: 2, duration: nil,
                requestCount: requests, warmup: .zero, drainTimeout: .seconds(5), connectTimeout: .seconds(5),
                idempotencyKeys: keys
            )
        }

        @Test func everyRequestCarriesAFreshNonEmptyKey() async throws {
            let broker = try FakeBroker { _, request in
                [
                    .replyV2(
                        CIP.Status.final, id: request.id,
                        body: #"{"intent":{"type":"Echo"},"handle":{"code":"success"}}"#)
                ]
            }
            defer { broker.stop() }
            let summary = try await LoadRunner(configuration: configuration(broker, keys: true), workload: .echo())
                .run()
            let requests = broker.requests
            try #require(requests.count == 300)
            #expect(requests.allSatisfy { $0.signature == "CIPC02" })
            let keys = requests.compactMap(\.key)
            #expect(keys.count == 300)
            #expect(keys.allSatisfy { !$0.isEmpty && $0.count <= CIP.maxIdempotencyKeyLength })
            #expect(Set(keys).count == 300, "keys repeat")
            // Every version-02 answer was understood: all final, none stray.
            #expect(summary.outcomes == ["final.handle.success": 300])
            #expect(summary.strayReplies == 0)
            #expect(summary.idempotencyKeys)
            #expect(summary.json["idempotency_keys"] == true)
            #expect(summary.table.contains("idempotency key"))
        }

        @Test func keysOfTwoRunsDiffer() async throws {
            let broker = try FakeBroker { _, request in
                [.replyV2(CIP.Status.final, id: request.id, body: #"{"handle":{"code":"success"}}"#)]
            }
            defer { broker.stop() }
            for _ in 0..<2 {
                _ = try await LoadRunner(
                    configuration: configuration(broker, keys: true, requests: 20), workload: .echo()
                ).run()
            }
            let keys = broker.requests.compactMap(\.key)
            #expect(keys.count == 40)
            #expect(Set(keys).count == 40)
        }

        @Test func withoutTheFlagRequestsStayVersionOne() async throws {
            let broker = try FakeBroker { _, request in [.success(request)] }
            defer { broker.stop() }
            let summary = try await LoadRunner(
                configuration: configuration(broker, keys: false, requests: 50), workload: .echo()
            ).run()
            #expect(broker.requests.count == 50)
            #expect(broker.requests.allSatisfy { $0.signature == "CIPC01" && $0.key == nil })
            #expect(!summary.idempotencyKeys)
            #expect(summary.json["idempotency_keys"] == false)
            #expect(!summary.table.contains("idempotency key"))
        }

        @Test func theCommandLineFlagTurnsKeysOn() async throws {
            let broker = try FakeBroker { _, request in
                [.replyV2(CIP.Status.final, id: request.id, body: #"{"handle":{"code":"success"}}"#)]
            }
            defer { broker.stop() }
            let result = try await runConcierge([
                "load", "--broker", broker.endpoint, "--concurrency", "2", "--connections", "1", "--requests", "10",
                "--warmup", "0s", "--quiet", "--json", "--idempotency",
            ])
            #expect(result.status == 0, "\(result.stderr)")
            let json = try result.json()
            #expect(json["idempotency_keys"] == true)
            #expect(json["outcomes"]?["final.handle.success"] == 10)
            let keys = broker.requests.compactMap(\.key)
            #expect(keys.count == 10 && Set(keys).count == 10 && keys.allSatisfy { !$0.isEmpty })
        }
    }
}
