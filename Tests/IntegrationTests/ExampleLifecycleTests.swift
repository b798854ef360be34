import ConciergeJSON
import ConciergeTestKit
import Foundation
import IntentClient
import IntentWire
import Testing

extension EndToEnd {
    /// The seed examples through a real broker and real worker processes: every resolution kind, confirm and handle
    /// codes, user activities, the lifecycle stopping where the user is needed, and a fresh handler per job.
    @Suite(.serialized) struct ExampleLifecycleTests {
        /// Starts a broker and two example workers and returns a connected client.
        func start() async throws -> (Cluster, ConciergeClient) {
            let cluster = try Cluster()
            // everyJobGetsAFreshHandler sends 24 at once to 8 slots: a short queue by design, not one to shed.
            try cluster.startBroker(["--standing-queue-wait-ms", "0"])
            try cluster.startWorker("w1")
            try cluster.startWorker("w2")
            let client = try cluster.client()
            try await cluster.waitUntilServing(client, intent: "SendMessage")
            return (cluster, client)
        }

        func intent(_ type: String, _ parameters: JSONObject) -> JSONValue {
            ["type": .string(type), "parameters": .object(parameters)]
        }

        @Test func requestRideDropOffInsideAreaSucceedsOutsideIsUnsupportedMissingNeedsValue() async throws {
            let (cluster, client) = try await start()
            defer { cluster.stopAll() }
            let inside = try await client.request(
                intent: intent(
                    "RequestRide",
                    ["dropOffLocation": ["name": "Ferry Building", "latitude": 37.7955, "longitude": -122.3937]]),
                phase: .resolve
            )
            #expect(inside.status == .final)
            #expect(inside.body_["resolve"]?["dropOffLocation"]?["kind"] == "success")
            #expect(inside.body_["resolve"]?["pickupLocation"]?["kind"] == "notRequired")

            let outside = try await client.request(
                intent: intent(
                    "RequestRide",
                    ["dropOffLocation": ["name": "San Jose", "latitude": 37.3382, "longitude": -121.8863]]),
                phase: .resolve
            )
            #expect(outside.body_["resolve"]?["dropOffLocation"]?["kind"] == "unsupported")

            let missing = try await client.request(intent: intent("RequestRide", [:]), phase: .resolve)
            #expect(missing.body_["resolve"]?["dropOffLocation"]?["kind"] == "needsValue")

            // The whole lifecycle of a ride inside the area ends in a handled ride.
            let ride = try await client.request(
                intent: intent("RequestRide", ["dropOffLocation": ["name": "Golden Gate Park"]]), phase: .lifecycle
            )
            #expect(ride.phase == "handle")
            #expect(ride.body_["handle"]?["code"] == "success")
            // The place's coordinates were written back into the intent.
            #expect(ride.body_["intent"]?["parameters"]?["dropOffLocation"]?["latitude"]?.doubleValue != nil)
        }

        @Test func sendMessageRecipientResolvesToEachKindAndWritesTheCustomIdentifierBack() async throws {
            let (cluster, client) = try await start()
            defer { cluster.stopAll() }
            func resolve(_ name: String) async throws -> JSONValue {
                try await client.request(
                    intent: intent("SendMessage", ["recipient": ["displayName": .string(name)], "content": "Hi"]),
                    phase: .resolve
                ).body_
            }
            let anna = try await resolve("Anna")
            #expect(anna["resolve"]?["recipient"]?["kind"] == "success")
            #expect(anna["resolve"]?["recipient"]?["value"]?["customIdentifier"] == "contact-anna")
            #expect(anna["intent"]?["parameters"]?["recipient"]?["customIdentifier"] == "contact-anna")
            #expect(anna["resolve"]?["attachments"]?["kind"] == "notRequired")

            let john = try await resolve("John")
            #expect(john["resolve"]?["recipient"]?["kind"] == "disambiguation")
            let options = john["resolve"]?["recipient"]?["options"]?.arrayValue ?? []
            #expect(
                Set(options.compactMap { $0["customIdentifier"]?.stringValue })
                    == ["contact-john-appleseed", "contact-john-doe"])

            let kate = try await resolve("Kate")
            #expect(kate["resolve"]?["recipient"]?["kind"] == "confirmationRequired")
            #expect(kate["resolve"]?["recipient"]?["value"]?["displayName"] == "Kate Bell")

            let nobody = try await resolve("Zebedee")
            #expect(nobody["resolve"]?["recipient"]?["kind"] == "unsupported")
            #expect(nobody["resolve"]?["recipient"]?["reason"] == "noContactFound")

            let missing = try await client.request(intent: intent("SendMessage", ["content": "Hi"]), phase: .resolve)
            #expect(missing.body_["resolve"]?["recipient"]?["kind"] == "needsValue")

            // The next round: the user picked John Doe from the options; his custom identifier skips name matching.
            let picked = try await client.request(
                intent: intent(
                    "SendMessage",
                    ["recipient": ["displayName": "John", "customIdentifier": "contact-john-doe"], "content": "Hi"]
                ),
                phase: .lifecycle
            )
            #expect(picked.phase == "handle")
            #expect(picked.body_["resolve"]?["recipient"]?["value"]?["displayName"] == "John Doe")
            #expect(picked.body_["handle"]?["code"] == "success")
        }

        /// Section 5.15: whether a lifecycle's phases run as a job each, resolve and confirm in one job (the default)
        /// or all in one job, the client gets the same answers byte for byte, and the broker chained what it was told
        /// to (its statistics at stop count the phases a worker went on to without a JOB).
        @Test func aLifecycleAnswersTheSameWhateverItsPhasesChain() async throws {
            var answers: [String: [String]] = [:]
            for (chain, expected) in [("off", 0), ("confirm", 1), ("handle", 2)] {
                let cluster = try Cluster()
                defer { cluster.stopAll() }
                try cluster.startBroker(["--chain-lifecycle", chain, "--log-level", "info"])
                try cluster.startWorker("w1")
                let client = try cluster.client()
                try await cluster.waitUntilServing(client, intent: "SendPayment")
                let paid = try await client.request(
                    intent: intent(
                        "SendPayment",
                        [
                            "payee": ["displayName": "Anna"], "note": "lunch",
                            "currencyAmount": ["amount": "12.50", "currencyCode": "EUR"],
                        ]),
                    phase: .lifecycle)
                #expect(paid.phase == "handle" && paid.body_["handle"]?["code"] == "success", "\(chain)")
                let asks = try await client.request(
                    intent: intent("SendMessage", ["recipient": ["displayName": "John"], "content": "Hi"]),
                    phase: .lifecycle)
                #expect(asks.phase == "resolve", "\(chain)")
                answers[chain] = [paid, asks].map { "\($0.phase) \(String(decoding: $0.body, as: UTF8.self))" }
                cluster.signal("broker", SIGTERM)
                #expect(await cluster.waitForExit("broker") == 0)
                #expect(
                    cluster.log("broker").contains("chainedPhases: \(expected),"),
                    "\(chain): \(cluster.log("broker").suffix(3000))")
            }
            #expect(
                answers["off"] != nil && answers["off"] == answers["confirm"] && answers["off"] == answers["handle"])
        }

        @Test func lifecycleStopsAtResolveWhenAParameterNeedsTheUser() async throws {
            let (cluster, client) = try await start()
            defer { cluster.stopAll() }
            let reply = try await client.request(
                intent: intent("SendMessage", ["recipient": ["displayName": "John"], "content": "Hi"]),
                phase: .lifecycle
            )
            #expect(reply.status == .final)
            #expect(reply.phase == "resolve")
            #expect(reply.body_["resolve"]?["recipient"]?["kind"] == "disambiguation")
            #expect(reply.body_["confirm"] == nil)
            #expect(reply.body_["handle"] == nil)
        }

        @Test func sendPaymentWithoutAmountNeedsValueAndUnsupportedCurrencyIsUnsupported() async throws {
            let (cluster, client) = try await start()
            defer { cluster.stopAll() }
            let noAmount = try await client.request(
                intent: intent("SendPayment", ["payee": ["displayName": "Anna"]]), phase: .resolve
            )
            #expect(noAmount.body_["resolve"]?["currencyAmount"]?["kind"] == "needsValue")
            #expect(noAmount.body_["resolve"]?["payee"]?["kind"] == "success")

            let canadian = try await client.request(
                intent: intent(
                    "SendPayment",
                    ["payee": ["displayName": "Anna"], "currencyAmount": ["amount": "20.00", "currencyCode": "CAD"]]
                ),
                phase: .lifecycle
            )
            #expect(canadian.phase == "resolve")
            #expect(canadian.body_["resolve"]?["currencyAmount"]?["kind"] == "unsupported")
            #expect(canadian.body_["resolve"]?["currencyAmount"]?["reason"] == "paymentsCurrencyUnsupported")

            let euros = try await client.request(
                intent: intent(
                    "SendPayment",
                    ["payee": ["displayName": "Anna"], "currencyAmount": ["amount": "12.50", "currencyCode": "EUR"]]
                ),
                phase: .lifecycle
            )
            #expect(euros.phase == "handle")
            #expect(euros.body_["confirm"]?["code"] == "ready")
            #expect(euros.body_["handle"]?["code"] == "success")
        }

        @Test func startWorkoutOutdoorsFailsConfirmRequiringAppLaunchWithItsUserActivity() async throws {
            let (cluster, client) = try await start()
            defer { cluster.stopAll() }
            let reply = try await client.request(
                intent: intent("StartWorkout", ["workoutName": "run", "workoutLocationType": "outdoor"]),
                phase: .lifecycle
            )
            #expect(reply.phase == "confirm")
            #expect(reply.body_["confirm"]?["code"] == "failureRequiringAppLaunch")
            #expect(
                reply.body_["confirm"]?["userActivity"]?["activityType"] == "com.example.concierge.noLocationAvailable")
            #expect(reply.body_["handle"] == nil)
        }

        @Test func startWorkoutIndoorsContinuesInAppWithTheDefaultUserActivity() async throws {
            let (cluster, client) = try await start()
            defer { cluster.stopAll() }
            let reply = try await client.request(
                intent: intent("StartWorkout", ["workoutName": "yoga", "workoutLocationType": "indoor"]),
                phase: .lifecycle
            )
            #expect(reply.phase == "handle")
            #expect(reply.body_["confirm"]?["code"] == "ready")
            #expect(reply.body_["handle"]?["code"] == "continueInApp")
            let activity = reply.body_["handle"]?["userActivity"]
            #expect(activity?["activityType"] == "StartWorkout")
            #expect(activity?["userInfo"]?["interaction"]?["intent"]?["type"] == "StartWorkout")
            #expect(activity?["userInfo"]?["interaction"]?["response"]?["code"] == "continueInApp")
        }

        @Test func everyJobGetsAFreshHandler() async throws {
            let (cluster, client) = try await start()
            defer { cluster.stopAll() }
            let proofs = try await withThrowingTaskGroup(of: JSONValue?.self) { group in
                for index in 0..<24 {
                    group.addTask {
                        try await client.request(
                            intent: intent("Echo", ["text": .string("job \(index)"), "delayMs": 20]), phase: .lifecycle,
                            deadline: .seconds(30)
                        ).body_["handle"]?["data"]
                    }
                }
                var proofs: [JSONValue] = []
                for try await proof in group { if let proof { proofs.append(proof) } }
                return proofs
            }
            #expect(proofs.count == 24)
            #expect(proofs.allSatisfy { $0["jobsSeen"] == 1 })
            let instances = proofs.map { "\($0["pid"]!)-\($0["instance"]!)" }
            #expect(Set(instances).count == 24)
        }

        @Test func throwingHandlerGivesAFailureResponseAndTheWorkerLivesOn() async throws {
            let (cluster, client) = try await start()
            defer { cluster.stopAll() }
            let failed = try await client.request(intent: intent("Echo", ["failWith": "boom"]), phase: .handle)
            #expect(failed.status == .final)
            #expect(failed.body_["handle"]?["code"] == "failure")
            #expect(failed.body_["handle"]?["message"]?.stringValue?.contains("boom") == true)

            let resolveFailed = try await client.request(
                intent: intent("Echo", ["failWith": "bad resolve", "delayPhase": "resolve"]), phase: .resolve
            )
            #expect(resolveFailed.status == .error)
            #expect(resolveFailed.errorCode == "handler-failed")

            let fine = try await client.request(intent: intent("Echo", ["text": "alive"]), phase: .handle)
            #expect(fine.body_["handle"]?["data"]?["text"] == "alive")
        }
    }
}
