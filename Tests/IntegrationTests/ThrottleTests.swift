import ConciergeJSON
import ConciergeTestKit
import ConciergeTop
import Foundation
import IntentClient
import IntentWire
import Testing

extension EndToEnd {
    /// Client-side adaptive throttling (`AdaptiveThrottle`, `Docs/OVERLOAD.md`): a client that hears `busy` refuses
    /// a share of new requests itself, and the broker never sees them.
    @Suite(.serialized) struct ThrottleTests {
        func echo(_ parameters: JSONObject) -> JSONValue {
            ["type": "Echo", "parameters": .object(parameters)]
        }

        /// The broker's count of requests it received (every REQUEST ends in one outcome of
        /// `concierge_requests_total`), once nothing is in flight.
        func brokerRequests(port: Int, atLeast: Double = 0) async throws -> Double {
            var scrape = Scrape("")
            try await waitUntil("the broker has nothing in flight") {
                scrape = Scrape(try httpGet(port: port, "/metrics").body)
                return scrape.sum("concierge_requests_in_flight") == 0
                    && scrape.sum("concierge_requests_total") >= atLeast
            }
            return scrape.sum("concierge_requests_total")
        }

        /// Four times the capacity, offered by `concierge load --client-throttle 1.1`: the client refuses most of the
        /// excess itself, the broker receives exactly the requests that were not throttled, and it refuses fewer
        /// than it serves (without the throttle it refuses about three for each one it serves).
        @Test func aThrottledLoadSendsLittleMoreThanTheBrokerAccepts() async throws {
            let cluster = try Cluster()
            try cluster.startBroker(["--http", "127.0.0.1:0"])
            let port = try await cluster.brokerHTTPPort()
            try cluster.startWorker("slow", capacity: 2)
            let client = try cluster.client()
            try await cluster.waitUntilServing(client)
            let before = try await brokerRequests(port: port)
            // Two 20 ms jobs at a time: about 100 requests/s, offered 400/s for 3 s.
            let load = try runConcierge([
                "load", "--broker", cluster.frontend, "--rate", "400", "--duration", "3s", "--warmup", "0s",
                "--delay-ms", "20", "--deadline-ms", "500", "--drain-timeout", "10s", "--client-throttle", "1.1",
                "--json", "--quiet",
            ])
            #expect(load.status == 0, "\(load.error)")
            let summary = try JSONValue.parse(Array(load.output.utf8))
            let outcomes = try #require(summary["outcomes"]?.objectValue, "\(load.output)")
            #expect(
                Set(outcomes.keys).isSubset(of: ["final.handle.success", "progress", "error.busy", "throttled"]),
                "\(outcomes)")
            #expect(summary["unanswered"] == 0)
            let requests = try #require(summary["requests"]?.intValue)
            let throttled = try #require(summary["throttled"]?.intValue)
            let served = outcomes["final.handle.success"]?.intValue ?? 0
            let busy = outcomes["error.busy"]?.intValue ?? 0
            #expect(outcomes["throttled"]?.intValue == throttled)
            #expect(served + busy + throttled == requests, "\(outcomes)")
            #expect(served > 0)
            #expect(throttled > busy, "\(outcomes)")
            #expect(busy < served, "the throttle let through more than twice what the broker accepted: \(outcomes)")
            // Throttled requests never reached the broker.
            let after = try await brokerRequests(port: port, atLeast: before + Double(requests - throttled))
            #expect(after - before == Double(requests - throttled), "\(outcomes)")
        }

        /// A `ConciergeClient` with a throttle: after a burst the broker mostly refused, the next burst is partly
        /// refused by the client itself (`ClientError.throttled`, nothing sent), and the rest is answered as usual.
        @Test func aThrottledClientRefusesLocallyAfterTheBrokerRefused() async throws {
            let cluster = try Cluster()
            try cluster.startBroker(["--http", "127.0.0.1:0"])
            let port = try await cluster.brokerHTTPPort()
            try cluster.startWorker("single", capacity: 1)
            let client = try ConciergeClient(
                configuration: .init(
                    brokerEndpoint: cluster.frontend, heartbeatInterval: .milliseconds(250),
                    throttle: try .init(multiplier: 1.1)))
            try await cluster.waitUntilServing(client)
            // Teach the broker the pace of one 100 ms job at a time, then offer 40 at once with a 1 s deadline: most
            // are refused with busy (OverloadTests shows the same burst without a throttle).
            for index in 0..<8 {
                let reply = try await client.request(
                    intent: echo(["text": .string("pace \(index)"), "delayMs": 100]), phase: .handle)
                #expect(reply.status == .final)
            }
            func burst(_ name: String) async -> (served: Int, busy: Int, throttled: [ClientError]) {
                let streams = (0..<40).map {
                    client.send(
                        intent: echo(["text": .string("\(name) \($0)"), "delayMs": 100]), phase: .handle,
                        deadline: .seconds(1))
                }
                var served = 0
                var busy = 0
                var throttled: [ClientError] = []
                for stream in streams {
                    do {
                        let last = try await Cluster.replies(stream).last
                        if last?.status == .final { served += 1 }
                        if last?.errorCode == "busy" { busy += 1 }
                    } catch let error as ClientError {
                        throttled.append(error)
                    } catch {
                        Issue.record("unexpected \(error)")
                    }
                }
                return (served, busy, throttled)
            }
            let first = await burst("first")
            #expect(first.busy >= 20, "\(first)")
            let before = try await brokerRequests(port: port)
            let second = await burst("second")
            #expect(!second.throttled.isEmpty, "\(second)")
            #expect(second.throttled.allSatisfy { $0.code == .throttled }, "\(second.throttled)")
            #expect(second.throttled.first?.message.contains("not sent") == true)
            #expect(second.served + second.busy + second.throttled.count == 40, "\(second)")
            // The throttled requests never reached the broker.
            let sent = Double(40 - second.throttled.count)
            let after = try await brokerRequests(port: port, atLeast: before + sent)
            #expect(after - before == sent)
        }
    }
}
