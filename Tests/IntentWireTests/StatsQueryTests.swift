import ConciergeJSON
import IntentWire
import Testing

/// `CIPW02 STATS` (PROTOCOL.md 5.14): the query any backend peer may send, and the body of its answer.
@Suite struct StatsQueryTests {
    let decoder = WorkerMessageDecoder()

    @Test func aVersion2StatsIsAQueryRegisteredOrNot() throws {
        #expect(try decoder.isStatsQuery(frames("CIPW02", "STATS")))
    }

    @Test func statsWithExtraFramesIsMalformed() {
        for message in [frames("CIPW02", "STATS", ""), frames("CIPW02", "STATS", "Echo", "more")] {
            #expect(throws: WorkerMessageError.self) { try decoder.isStatsQuery(message) }
            do throws(WorkerMessageError) {
                _ = try decoder.isStatsQuery(message)
            } catch {
                #expect(error.code == .malformed)
                #expect(error.check == 3)
                #expect(error.command == .stats)
                #expect(!error.isFromRegisteredWorker, "a query proves no worker alive")
            }
        }
    }

    /// Frames a receiver dropped count, but are never read (the fuzz target found a read past the kept ones).
    @Test func droppedFramesAreCountedNotRead() throws {
        func check(_ frames: [[UInt8]], dropped: Int) -> Result<Bool, WorkerMessageError> {
            WireFrames.withFrames(frames, dropped: dropped) { wire in
                Result { () throws(WorkerMessageError) in try decoder.isStatsQuery(wire) }
            }
        }
        #expect(try check(frames("CIPW02"), dropped: 3).get() == false)
        #expect(throws: WorkerMessageError.self) { try check(frames("CIPW02", "STATS"), dropped: 1).get() }
    }

    @Test func otherMessagesAreNotQueries() throws {
        for message in [
            frames("CIPW01", "STATS"), frames("CIPW02", "HEARTBEAT"), frames("CIPW02"), frames("CIPW07", "STATS"),
            frames("CIPW02", "stats"),
        ] {
            #expect(try !decoder.isStatsQuery(message), "\(message)")
        }
    }

    @Test func aVersion1StatsKeepsTheRulesOfVersion1() throws {
        // Not a query: from an unregistered peer it is answered DISCONNECT, from a worker unknown-command.
        #expect(try decoder.decode(frames("CIPW01", "STATS"), isRegistered: false) == .unregistered(nil))
        #expect(decoder.error(frames("CIPW01", "STATS"), isRegistered: true)?.code == .unknownCommand)
    }

    @Test func theBodyRoundTripsAndIgnoresUnknownKeys() throws {
        let stats = BrokerStats(
            state: "active", defaultDeadlineMilliseconds: 3000, requestsInFlight: 7, queued: 3,
            intentTypes: [
                .init(
                    name: "Echo", queued: 3, oldestAgeMilliseconds: 812, workers: 2, capacity: 8, capacityUsed: 4,
                    capacityFree: 4)
            ],
            workers: [
                .init(name: "pool-0", capacity: 4, jobs: 4, intents: ["Echo", "SendPayment"]),
                .init(name: "pool-1", capacity: 4, jobs: 0, draining: true, intents: ["Echo"]),
            ])
        #expect(try BrokerStats(parsing: stats.serialized()) == stats)
        var json = stats.json
        if case .object(var object) = json {
            object["later_version_key"] = .string("ignored")
            json = .object(object)
        }
        #expect(try BrokerStats(parsing: json.serialized()) == stats)
        let text = String(decoding: stats.serialized(), as: UTF8.self)
        for key in [
            "\"oldest_age_ms\":812", "\"capacity_used\":4", "\"capacity_free\":4", "\"requests_in_flight\":7",
            "\"default_deadline_ms\":3000", "\"draining\":true",
        ] {
            #expect(text.contains(key), "\(text)")
        }
    }

    @Test func aBodyWithoutItsKeysIsRefused() {
        for body in [
            "[]", "{}", #"{"intent_types":[],"workers":[]}"#,
            #"{"state":"active","default_deadline_ms":-1,"requests_in_flight":0,"queued":0,"intent_types":[],"workers":[]}"#,
            #"{"state":"active","default_deadline_ms":1,"requests_in_flight":0,"queued":0,"intent_types":[],"workers":[{"name":"w","capacity":1,"jobs":0}]}"#,
            "not json",
        ] {
            #expect(throws: BrokerStatsError.self, "\(body)") { try BrokerStats(parsing: Array(body.utf8)) }
        }
    }
}
