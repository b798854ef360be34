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

        /// A broker with one worker that runs two 20 ms jobs at a time (about 100 requests/s), and its HTTP port.
        func slowCluster() async throws -> (Cluster, port: Int) {
            let cluster = try Cluster()
            try cluster.startBroker(["--http", "127.0.0.1:0"])
            let port = try await cluster.brokerHTTPPort()
            try cluster.startWorker("slow", capacity: 2)
            try await cluster.waitUntilServing(try cluster.client())
            return (cluster, port)
        }

        /// What `concierge load` with `flags` counted when offering 400 requests/s for 3 s to ``slowCluster()``
        /// (four times its capacity), after checking that every request is accounted for and that the broker
        /// received exactly the requests the client did not refuse itself.
        func overload(_ cluster: Cluster, port: Int, _ flags: [String]) async throws -> (
            served: Int, busy: Int, throttled: Int, outcomes: JSONObject
        ) {
            let before = try await brokerRequests(port: port)
            let load = try runConcierge(
                [
                    "load", "--broker", cluster.frontend, "--rate", "400", "--duration", "3s", "--warmup", "0s",
                    "--delay-ms", "20", "--deadline-ms", "500", "--drain-timeout", "10s", "--json", "--quiet",
                ] + flags)
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
            #expect((outcomes["throttled"]?.intValue ?? 0) == throttled)
            #expect(served + busy + throttled == requests, "\(outcomes)")
            #expect(served > 0)
            // What the client refused never reached the broker.
            let after = try await brokerRequests(port: port, atLeast: before + Double(requests - throttled))
            #expect(after - before == Double(requests - throttled), "\(outcomes)")
            return (served, busy, throttled, outcomes)
        }

        /// Four times the capacity, offered by `concierge load --client-throttle 1.1` (ignoring the pushback, so that
        /// only the throttle refuses): the client refuses most of the excess itself, and the broker refuses fewer
        /// than it serves (without the throttle it refuses about three for each one it serves).
        @Test func aThrottledLoadSendsLittleMoreThanTheBrokerAccepts() async throws {
            let (cluster, port) = try await slowCluster()
            let run = try await overload(cluster, port: port, ["--client-throttle", "1.1", "--ignore-pushback"])
            #expect(run.throttled > run.busy, "\(run.outcomes)")
            #expect(
                run.busy < run.served, "the throttle let through more than twice what the broker took: \(run.outcomes)")
        }

        /// The broker's pushback (`Pushback`, PROTOCOL.md 6.3), heeded by `concierge load` by default: four times the
        /// capacity, and the client refuses most of the excess itself, unsent. With `--ignore-pushback` every request
        /// is sent, and the broker refuses more than it serves.
        @Test func aLoadHeedsTheBrokersPushbackUnlessToldNotTo() async throws {
            let (cluster, port) = try await slowCluster()
            let heeded = try await overload(cluster, port: port, [])
            #expect(heeded.throttled > heeded.busy, "\(heeded.outcomes)")
            #expect(
                heeded.busy < heeded.served,
                "the pushback let through more than twice what the broker took: \(heeded.outcomes)")
            let ignored = try await overload(cluster, port: port, ["--ignore-pushback"])
            #expect(ignored.throttled == 0, "\(ignored.outcomes)")
            #expect(ignored.busy > ignored.served, "\(ignored.outcomes)")
        }

        /// A `ConciergeClient` heeds the pushback of a `busy` refusal by default: right after one, new requests of the
        /// type beyond the rate it names fail at once with `ClientError.throttled`, unsent. A client told not to
        /// heed it sends them all.
        @Test func aClientHeedsThePushbackOfABusyRefusalByDefault() async throws {
            let cluster = try Cluster()
            try cluster.startBroker(["--http", "127.0.0.1:0"])
            let port = try await cluster.brokerHTTPPort()
            try cluster.startWorker("single", capacity: 1)
            for heeds in [true, false] {
                var configuration = ClientConfiguration(
                    brokerEndpoint: cluster.frontend, heartbeatInterval: .milliseconds(250))
                configuration.heedsPushback = heeds
                let client = try ConciergeClient(configuration: configuration)
                try await cluster.waitUntilServing(client)
                // Teach the broker the pace of one 100 ms job at a time (about 10 jobs/s).
                for index in 0..<8 {
                    let reply = try await client.request(
                        intent: echo(["text": .string("pace \(index)"), "delayMs": 100]), phase: .handle)
                    #expect(reply.status == .final)
                }
                let before = try await brokerRequests(port: port)
                // 40 at once with a 1 s deadline: the last ones are refused at arrival, with a pushback of about
                // 11 requests/s for this client.
                let burst = (0..<40).map {
                    client.send(
                        intent: echo(["text": .string("burst \($0)"), "delayMs": 100]), phase: .handle,
                        deadline: .seconds(1))
                }
                // The client sends the burst while replies come in, so a refusal of one of its first requests may
                // already be heeded for its last ones: look for a `busy` from the end, where refusals come at once
                // (a `throttled` burst request counts as refused by the client, and only when heeding).
                var burstThrottled = 0
                var settled = 0
                var found: Reply?
                for stream in burst.reversed() {
                    settled += 1
                    do {
                        let last = try await Cluster.replies(stream).last
                        if last?.errorCode == "busy" {
                            found = last
                            break
                        }
                    } catch let error as ClientError where heeds && error.code == .throttled {
                        burstThrottled += 1
                    }
                }
                let refusal = try #require(found, "no busy refusal in the burst")
                #expect(
                    Pushback.Hint(errorBody: refusal.body)?.rate ?? 0 > 0,
                    "\(String(decoding: refusal.body, as: UTF8.self))")
                // At once, 20 more: with the pushback in force (1 s), at most a few tokens' worth go out.
                let next = (0..<20).map {
                    client.send(
                        intent: echo(["text": .string("next \($0)"), "delayMs": 1]), phase: .handle,
                        deadline: .seconds(1))
                }
                var throttled: [ClientError] = []
                for stream in next {
                    do {
                        _ = try await Cluster.replies(stream)
                    } catch let error as ClientError {
                        throttled.append(error)
                    }
                }
                if heeds {
                    #expect(throttled.count >= 10, "\(throttled)")
                    #expect(throttled.allSatisfy { $0.code == .throttled }, "\(throttled)")
                    #expect(throttled.first?.message.contains("pushback") == true)
                } else {
                    #expect(throttled.isEmpty, "\(throttled)")
                }
                for stream in burst.dropLast(settled) {
                    do {
                        _ = try await Cluster.replies(stream)
                    } catch let error as ClientError where heeds && error.code == .throttled {
                        burstThrottled += 1
                    }
                }
                // The refused requests never reached the broker; the others did.
                let sent = Double(40 + 20 - throttled.count - burstThrottled)
                let after = try await brokerRequests(port: port, atLeast: before + sent)
                #expect(after - before == sent)
            }
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
