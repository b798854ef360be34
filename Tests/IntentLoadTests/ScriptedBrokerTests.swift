import ConciergeJSON
import Foundation
import IntentLoad
import IntentWire
import Synchronization
import Testing

/// Tests that run loads, one at a time (the machine is small and the assertions count what the load did).
@Suite(.serialized) enum LoadRuns {}

extension LoadRuns {
    /// The load runner against a scripted stand-in for the broker: exactly what was sent and what each reply
    /// does to the counts, independent of the real broker's speed.
    @Suite struct ScriptedBroker {
        func closed(
            _ broker: FakeBroker, concurrency: Int, connections: Int = 1, requests: Int? = nil,
            duration: Duration? = nil, warmup: Duration = .zero, deadlineMs: Int = 3000,
            drain: Duration = .seconds(5)
        ) -> LoadConfiguration {
            LoadConfiguration(
                endpoint: broker.endpoint, mode: .closed(concurrency: concurrency), connections: connections,
                duration: duration, requestCount: requests, warmup: warmup, deadlineMilliseconds: deadlineMs,
                drainTimeout: drain, connectTimeout: .seconds(5)
            )
        }

        @Test func closedLoopSendsTheRequestCountAndCountsEveryFinalReply() async throws {
            let broker = try FakeBroker { _, request in [.success(request)] }
            defer { broker.stop() }
            let summary = try await LoadRunner(
                configuration: closed(broker, concurrency: 8, connections: 2, requests: 200), workload: .echo()
            ).run()
            #expect(summary.requests == 200)
            #expect(broker.requests.count == 200)
            #expect(summary.outcomes == ["final.handle.success": 200])
            #expect(summary.finalReplies == 200)
            #expect(summary.errors == 0)
            #expect(summary.strayReplies == 0)
            #expect(summary.finalReply.count == 200)
            #expect(summary.firstReply.count == 200)
        }

        /// With a request count below the concurrency, the first burst sends `concurrency` requests anyway: the
        /// ones past the count go out unmeasured (LoadRunner.swift, the initial `for index in 0..<concurrency`
        /// loop sends even when `measuredSent >= countLimit` after the warm-up), and the run waits for them.
        @Test func closedLoopNeverSendsMoreThanTheRequestCountAfterTheWarmUp() async throws {
            let broker = try FakeBroker { _, request in [.success(request)] }
            defer { broker.stop() }
            let summary = try await LoadRunner(
                configuration: closed(broker, concurrency: 10, requests: 4), workload: .echo()
            ).run()
            #expect(summary.requests == 4)
            #expect(summary.outcomes == ["final.handle.success": 4])
            do {
                #expect(broker.requests.count == 4)
            }
        }

        @Test func closedLoopKeepsAtMostTheConcurrencyInFlight() async throws {
            // Nothing is ever answered: a closed loop must stop at `concurrency` requests and wait.
            let broker = try FakeBroker { _, _ in [] }
            defer { broker.stop() }
            let summary = try await LoadRunner(
                configuration: closed(
                    broker, concurrency: 6, connections: 3, duration: .milliseconds(300), drain: .milliseconds(200)
                ),
                workload: .echo()
            ).run()
            #expect(broker.requests.count == 6)
            #expect(summary.requests == 6)
            #expect(summary.unanswered == 6)
            #expect(summary.outcomes == ["unanswered": 6])
            #expect(summary.finalReply.count == 0)
            #expect(summary.throughputRPS == 0)
        }

        @Test func requestsCarryTheWorkloadFramesUniqueIDsAndTheDeadline() async throws {
            let broker = try FakeBroker { _, request in [.success(request)] }
            defer { broker.stop() }
            let workload = try mix(
                """
                [{"weight": 3, "phase": "resolve", "intent": {"type": "Alpha", "parameters": {"n": 1}}},
                 {"weight": 1, "phase": "lifecycle", "intent": {"type": "Beta", "parameters": {"s": "x"}}}]
                """
            )
            let summary = try await LoadRunner(
                configuration: closed(broker, concurrency: 8, connections: 4, requests: 400, deadlineMs: 1234),
                workload: workload
            ).run()
            #expect(summary.requests == 400)
            let requests = broker.requests
            try #require(requests.count == 400)
            #expect(Set(requests.map(\.id)).count == 400)
            #expect(requests.allSatisfy { $0.id.count == 8 })
            #expect(requests.allSatisfy { $0.deadline == "1234" })
            #expect(Set(requests.map(\.connection)).count == 4)  // spread over every connection
            for request in requests {
                let item = try #require(workload.items.first { $0.intentType == request.intentType })
                #expect(request.phase == item.phase.description)
                #expect(request.body == item.body)
            }
            let alpha = requests.filter { $0.intentType == "Alpha" }.count
            #expect(abs(Double(alpha) / 400 - 0.75) < 0.1, "\(alpha) of 400 were Alpha (weight 3 of 4)")
            #expect(summary.outcomes == ["final.handle.success": 400])
        }

        @Test func repliesThatMatchNoRequestAreCountedAsStrayAndIgnored() async throws {
            let broker = try FakeBroker { _, request in
                [
                    // An id nobody sent, a malformed id, a message with too few frames, a PONG (expected), then the
                    // real reply.
                    .reply(CIP.Status.final, id: [UInt8](repeating: 0xFF, count: 8), body: "{}"),
                    .reply(CIP.Status.progress, id: [1, 2, 3], body: "{}"),
                    FakeBroker.Reply(frames: [CIP.clientSignature.bytes, CIP.Broker.reply.bytes, request.id]),
                    FakeBroker.Reply(frames: [CIP.clientSignature.bytes, CIP.Broker.pong.bytes]),
                    .success(request),
                ]
            }
            defer { broker.stop() }
            let summary = try await LoadRunner(
                configuration: closed(broker, concurrency: 5, requests: 50), workload: .echo()
            ).run()
            #expect(summary.requests == 50)
            #expect(summary.strayReplies == 150)
            #expect(summary.outcomes == ["final.handle.success": 50])
            #expect(summary.errors == 0)
        }

        @Test func secondFinalReplyForTheSameRequestIsStray() async throws {
            // One request at a time: each duplicate arrives before the reply to the next request.
            let broker = try FakeBroker { _, request in
                [.success(request), .success(request)]
            }
            defer { broker.stop() }
            let summary = try await LoadRunner(
                configuration: closed(broker, concurrency: 1, requests: 30), workload: .echo()
            ).run()
            #expect(summary.requests == 30)
            #expect(summary.outcomes == ["final.handle.success": 30])
            // Every duplicate but perhaps the very last (the run may end before it arrives) is seen as stray.
            #expect((29...30).contains(summary.strayReplies))
        }

        @Test func outcomesAreCountedFromEachReply() async throws {
            let broker = try FakeBroker { index, request in
                switch index % 4 {
                case 0: [.success(request)]
                case 1: [.reply(CIP.Status.final, id: request.id, body: "garbage")]
                case 2: [.reply(CIP.Status.error, id: request.id, body: #"{"code": "busy", "message": "full"}"#)]
                default:
                    [
                        .reply(CIP.Status.progress, id: request.id, body: #"{"state": "running"}"#),
                        .reply(
                            CIP.Status.final, id: request.id, phase: "confirm", body: #"{"confirm": {"code": "ready"}}"#
                        ),
                    ]
                }
            }
            defer { broker.stop() }
            let summary = try await LoadRunner(
                configuration: closed(broker, concurrency: 4, connections: 2, requests: 100), workload: .echo()
            ).run()
            #expect(summary.requests == 100)
            #expect(
                summary.outcomes == [
                    "final.handle.success": 25, "final.handle.unparsable": 25, "error.busy": 25, "progress": 25,
                    "final.confirm.ready": 25,
                ]
            )
            #expect(summary.finalReplies == 75)
            #expect(summary.errorReplies == 25)
            #expect(summary.progressReplies == 25)
            #expect(summary.errors == 25)
            #expect(summary.firstReply.count == 100)
            #expect(summary.finalReply.count == 100)
            #expect(summary.throughputRPS < summary.answeredRPS)  // error replies answer but do not count as done
        }

        @Test func requestsWithoutAFinalReplyAreUnansweredAfterTheDrainTimeout() async throws {
            let broker = try FakeBroker { index, request in
                index.isMultiple(of: 2)
                    ? [.success(request)] : [.reply(CIP.Status.progress, id: request.id, body: #"{"state": "queued"}"#)]
            }
            defer { broker.stop() }
            let summary = try await LoadRunner(
                configuration: closed(broker, concurrency: 20, connections: 4, requests: 20, drain: .milliseconds(300)),
                workload: .echo()
            ).run()
            #expect(summary.requests == 20)
            #expect(summary.finalReplies == 10)
            #expect(summary.progressReplies == 10)
            #expect(summary.unanswered == 10)
            #expect(summary.errors == 10)
            #expect(summary.outcomes == ["final.handle.success": 10, "progress": 10, "unanswered": 10])
            #expect(summary.firstReply.count == 20)  // a progress reply is a first reply
            #expect(summary.finalReply.count == 10)
            #expect(summary.requests == summary.finalReplies + summary.errorReplies + summary.unanswered)
        }

        @Test func firstReplyAfterTheDeadlineIsADeadlineMiss() async throws {
            let broker = try FakeBroker { _, request in [.success(request, after: .milliseconds(300))] }
            defer { broker.stop() }
            let summary = try await LoadRunner(
                configuration: closed(broker, concurrency: 8, connections: 2, requests: 8, deadlineMs: 20),
                workload: .echo()
            ).run()
            #expect(summary.requests == 8)
            #expect(summary.deadlineMisses == 8)
            #expect(summary.outcomes == ["final.handle.success": 8])
            #expect(LoadGate(maxDeadlineMisses: 0).violations(of: summary).count == 1)
        }

        @Test func progressReplyInTimeIsNoDeadlineMissAndFirstRepliesComeBeforeFinalOnes() async throws {
            let broker = try FakeBroker { _, request in
                [
                    .reply(CIP.Status.progress, id: request.id, body: #"{"state": "running"}"#),
                    .success(request, after: .milliseconds(300)),
                ]
            }
            defer { broker.stop() }
            let summary = try await LoadRunner(
                configuration: closed(broker, concurrency: 8, connections: 2, requests: 16, deadlineMs: 200),
                workload: .echo()
            ).run()
            #expect(summary.requests == 16)
            #expect(summary.deadlineMisses == 0)
            #expect(summary.progressReplies == 16)
            #expect(summary.finalReplies == 16)
            #expect(summary.firstReply.p99 < summary.finalReply.p50)
            #expect(summary.firstReply.max < summary.finalReply.max)
        }

        @Test func warmUpRequestsAreSentButNotMeasured() async throws {
            let broker = try FakeBroker { _, request in [.success(request, after: .milliseconds(2))] }
            defer { broker.stop() }
            let summary = try await LoadRunner(
                configuration: closed(broker, concurrency: 2, requests: 50, warmup: .milliseconds(400)),
                workload: .echo()
            ).run()
            #expect(summary.requests == 50)
            #expect(summary.outcomes == ["final.handle.success": 50])
            #expect(summary.finalReply.count == 50)
            #expect(broker.requests.count > 50)  // the warm-up's requests came too
            #expect(summary.warmupSeconds == 0.4)
        }

        @Test func progressCallbackReportsTheRunAsItGoes() async throws {
            let broker = try FakeBroker { _, request in [.success(request, after: .milliseconds(5))] }
            defer { broker.stop() }
            var configuration = closed(
                broker, concurrency: 4, duration: .milliseconds(900), warmup: .milliseconds(400)
            )
            configuration.progressInterval = .milliseconds(100)
            let snapshots = Mutex<[LoadProgress]>([])
            let summary = try await LoadRunner(configuration: configuration, workload: .echo()).run { progress in
                snapshots.withLock { $0.append(progress) }
            }
            let seen = snapshots.withLock { $0 }
            try #require(seen.count >= 3)
            #expect(seen.first?.warmingUp == true)
            #expect(seen.last?.warmingUp == false)
            #expect(zip(seen, seen.dropFirst()).allSatisfy { $0.elapsedSeconds < $1.elapsedSeconds })
            #expect(zip(seen, seen.dropFirst()).allSatisfy { $0.sent <= $1.sent })
            // Warm-up requests are not counted; once measuring, they are.
            #expect(seen.filter(\.warmingUp).allSatisfy { $0.sent == 0 })
            #expect(seen.allSatisfy { $0.inFlight <= 4 && $0.errors == 0 })
            #expect((seen.last?.sent ?? 0) <= summary.requests)
            #expect(seen.contains { $0.rate > 0 })
        }

        @Test func stopEndsTheOfferingAndTheRunStillWaitsForOutstandingReplies() async throws {
            let broker = try FakeBroker { _, request in [.success(request, after: .milliseconds(20))] }
            defer { broker.stop() }
            let runner = try LoadRunner(
                configuration: closed(broker, concurrency: 4, duration: .seconds(60)), workload: .echo()
            )
            // Stopped once the run is under way (the scripted broker has answered a few requests), not after a fixed
            // time that a busy machine may need just to connect.
            let stopper = Task {
                let end = ContinuousClock.now + .seconds(30)
                while broker.requests.count < 10 && ContinuousClock.now < end {
                    try await Task.sleep(for: .milliseconds(10))
                }
                runner.stop()
            }
            let summary = try await runner.run()
            try await stopper.value
            #expect(summary.requests > 0)
            #expect(summary.unanswered == 0)
            #expect(summary.outcomes == ["final.handle.success": summary.requests])
            #expect(summary.durationSeconds < 30)
        }

        @Test func openLoopOffersTheRateForTheDuration() async throws {
            let broker = try FakeBroker { _, request in [.success(request)] }
            defer { broker.stop() }
            let configuration = LoadConfiguration(
                endpoint: broker.endpoint, mode: .open(rate: 500), connections: 2, duration: .seconds(1),
                warmup: .zero
            )
            let summary = try await LoadRunner(configuration: configuration, workload: .echo()).run()
            #expect(abs(summary.requests - 500) <= 50, "\(summary.requests) requests")
            #expect(broker.requests.count == summary.requests)
            #expect(abs(summary.offeredRPS - 500) <= 50, "offered \(summary.offeredRPS)/s")
            #expect(summary.outcomes == ["final.handle.success": summary.requests])
            #expect(summary.mode == "open")
            #expect(summary.targetRate == 500)
            #expect(summary.clientBacklogMax == 0)
        }

        /// Open loop, no coordinated omission: requests that fell due while the load thread was held up are sent as
        /// soon as it runs again, late, and their latency counts from their intended time. At the end of the
        /// offering window they are dropped instead: the loop's first check (`now >= offerEnd` -> `offering =
        /// false`) runs before the due requests are sent (LoadRunner.swift, top of `while true`).
        @Test func requestsThatFellDueDuringAStallAtTheEndOfTheWindowAreStillSent() async throws {
            let broker = try FakeBroker { _, request in [.success(request)] }
            defer { broker.stop() }
            // The progress callback runs on the load thread: the first call, 400 ms in, holds it for 200 ms, past
            // the end of the 500 ms window. Requests 400..<500 fall due meanwhile.
            var configuration = LoadConfiguration(
                endpoint: broker.endpoint, mode: .open(rate: 1000), connections: 1, duration: .milliseconds(500),
                warmup: .zero
            )
            configuration.progressInterval = .milliseconds(400)
            let stall = StallOnce(milliseconds: 200)
            let summary = try await LoadRunner(configuration: configuration, workload: .echo()).run { stall($0) }
            #expect(summary.requests >= 390)  // the ones before the stall were sent
            #expect(broker.requests.count == summary.requests)
            do {
                #expect(summary.requests >= 499, "\(summary.requests) of 500 scheduled requests were sent")
            }
        }

        @Test func requestsThatFellDueDuringAStallInTheWindowAreSentLateAndChargedTheWait() async throws {
            let broker = try FakeBroker { _, request in [.success(request)] }
            defer { broker.stop() }
            // Held up 200 ms at 300 ms into a 1 s window: the requests due meanwhile go out in a burst afterwards.
            var configuration = LoadConfiguration(
                endpoint: broker.endpoint, mode: .open(rate: 500), connections: 1, duration: .seconds(1),
                warmup: .zero
            )
            configuration.progressInterval = .milliseconds(300)
            let stall = StallOnce(milliseconds: 200)
            let summary = try await LoadRunner(configuration: configuration, workload: .echo()).run { stall($0) }
            #expect(abs(summary.requests - 500) <= 5, "\(summary.requests) of 500")
            // The request due right when the stall began waited at least 200 ms in the client.
            #expect(summary.finalReply.max >= 150_000)
            #expect(summary.unanswered == 0)
        }

        @Test func openLoopRequestCountEndsTheRunEarly() async throws {
            let broker = try FakeBroker { _, request in [.success(request)] }
            defer { broker.stop() }
            let configuration = LoadConfiguration(
                endpoint: broker.endpoint, mode: .open(rate: 1000), connections: 1, duration: nil, requestCount: 100,
                warmup: .zero
            )
            let summary = try await LoadRunner(configuration: configuration, workload: .echo()).run()
            #expect(summary.requests == 100)
            #expect(broker.requests.count == 100)
        }

        @Test func openLoopBeyondMaxInFlightWaitsInTheClientAndChargesTheWaitToLatency() async throws {
            // Every reply takes 200 ms and only 5 may be in flight: at most 25 of the 200 due requests go out in
            // the second, the rest wait in the client, and latency counts from each request's intended time.
            let broker = try FakeBroker { _, request in [.success(request, after: .milliseconds(200))] }
            defer { broker.stop() }
            let configuration = LoadConfiguration(
                endpoint: broker.endpoint, mode: .open(rate: 200), connections: 1, duration: .seconds(1),
                warmup: .zero, maxInFlight: 5
            )
            let summary = try await LoadRunner(configuration: configuration, workload: .echo()).run()
            #expect(summary.requests <= 30)
            #expect(summary.requests > 5)
            #expect(broker.requests.count == summary.requests)
            #expect(summary.clientBacklogMax > 50)
            // The sixth request was due at 25 ms but could only go out when a slot freed (200 ms or later), and its
            // reply took 200 ms more: its latency is at least 375 ms.
            #expect(summary.finalReply.max >= 350_000)
            #expect(summary.unanswered == 0)
        }

        @Test func brokerThatNeverAnswersPingIsUnreachable() async throws {
            let directory = try makeTemporaryDirectory("concierge-load-nobody")
            defer { try? FileManager.default.removeItem(at: directory) }
            let configuration = LoadConfiguration(
                endpoint: "ipc://\(directory.path)/nobody", mode: .closed(concurrency: 2), connections: 2,
                duration: .seconds(1), warmup: .zero, connectTimeout: .milliseconds(300)
            )
            let runner = try LoadRunner(configuration: configuration, workload: .echo())
            let error = await #expect(throws: LoadError.self) { try await runner.run() }
            #expect(error?.code == .unreachable)
            #expect(error?.message.contains("nobody") == true)
        }
    }
}
