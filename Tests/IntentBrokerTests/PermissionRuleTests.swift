import IntentPermissions
import IntentWire
import Testing

@testable import IntentBroker

/// The broker core's permission rules (PROTOCOL.md 13.3, `Docs/PERMISSIONS.md`) and its audit records, driven step by
/// step without sockets. Keys here are short stand-ins for the Z85 keys the ZAP handler gives.
@Suite struct PermissionRuleTests {
    static func permissions(alice: [String] = ["Echo:resolve,confirm"], workers: [String] = ["Echo"]) throws
        -> Permissions
    {
        try Permissions(identities: [
            PermissionIdentity(
                name: "alice", keys: ["KEY-A"],
                send: AccessList(allow: try alice.map { try IntentPattern(parsing: $0) })),
            PermissionIdentity(
                name: "workers", keys: ["KEY-W"],
                serve: AccessList(allow: try workers.map { try IntentPattern(parsing: $0) })),
        ])
    }

    static func harness(_ permissions: Permissions?, audit: Bool = false) throws -> CoreHarness {
        var configuration = BrokerConfiguration()
        configuration.permissions = permissions
        configuration.startupGracePeriod = .zero
        if audit { configuration.auditLog = "-" }
        return try CoreHarness(configuration)
    }

    @Test func aLifecycleNeedsEveryPhaseAndAForbiddenTypeIsNotToldApartFromAnUnservedOne() throws {
        var broker = try Self.harness(try Self.permissions())
        broker.register("w1", capacity: 4, identity: "KEY-W")
        broker.send("resolve", phase: .resolve, identity: "KEY-A")
        #expect(broker.delivered.map(\.request) == ["resolve"])
        broker.send("lifecycle", phase: .lifecycle, identity: "KEY-A")
        broker.send("handle", phase: .handle, identity: "KEY-A")
        broker.send("unserved", type: "Nobody", phase: .resolve, identity: "KEY-A")
        broker.send("unlisted", phase: .resolve, identity: "KEY-X")
        for id in ["lifecycle", "handle", "unserved", "unlisted"] {
            #expect(broker.endings(of: id).first?.code == "forbidden", "\(id)")
        }
        #expect(
            broker.endings(of: "unserved").first?.body.contains(#"\"alice\" may not send Nobody (resolve)"#) == true)
        #expect(broker.endings(of: "unlisted").first?.body.contains("not in the broker's permissions file") == true)
        #expect(broker.delivered.count == 1)
        #expect(broker.core.statistics.forbiddenRequests == 4)
    }

    /// A deny of one phase refuses a lifecycle of the type (it would run that phase), not the other phases.
    @Test func aDeniedPhaseRefusesTheLifecycleThatWouldRunIt() throws {
        let permissions = try Permissions(identities: [
            PermissionIdentity(
                name: "bob", keys: ["KEY-B"],
                send: AccessList(
                    allow: [try IntentPattern(parsing: "Echo")], deny: [try IntentPattern(parsing: "Echo:handle")])),
            PermissionIdentity(
                name: "workers", keys: ["KEY-W"], serve: AccessList(allow: [try IntentPattern(parsing: "*")])),
        ])
        var broker = try Self.harness(permissions)
        broker.register("w1", capacity: 4, identity: "KEY-W")
        broker.send("lifecycle", phase: .lifecycle, identity: "KEY-B")
        broker.send("confirm", phase: .confirm, identity: "KEY-B")
        #expect(broker.endings(of: "lifecycle").first?.code == "forbidden")
        #expect(broker.delivered.map(\.request) == ["confirm"])
    }

    @Test func aWorkerRegistersOnlyForWhatItMayServeWhole() throws {
        var broker = try Self.harness(try Self.permissions(workers: ["Echo", "Pay:resolve"]))
        broker.register("w1", types: ["Echo", "Pay"], identity: "KEY-W")
        #expect(broker.core.workers.isEmpty)
        let refusal = try #require(broker.controls.last)
        #expect(refusal.worker == "w1")
        #expect("\(refusal.control)".contains("forbidden") && "\(refusal.control)".contains("may not serve Pay"))
        broker.register("w2", types: ["Echo"], identity: "KEY-W")
        broker.register("w3", types: ["Echo"], identity: "KEY-A")
        #expect(broker.core.workers.values.map(\.name) == ["w2"])
        #expect(broker.core.statistics.forbiddenRegistrations == 2)
    }

    @Test func statusAndCancelAnswerOnlyTheKeyThatSentTheRequest() throws {
        var broker = try Self.harness(try Self.permissions(alice: ["*"]))
        broker.register("w1", version: 2, identity: "KEY-W")
        broker.send("a", identity: "KEY-A")
        broker.status("a", identity: "KEY-OTHER")
        #expect(broker.replies.last?.code == "unknown-request")
        broker.cancel("a", identity: "KEY-OTHER")
        #expect(broker.cancels(to: "w1").isEmpty)
        broker.status("a", identity: "KEY-A")
        #expect(broker.replies.last?.status == .progress)
        broker.cancel("a", identity: "KEY-A")
        #expect(broker.cancels(to: "w1") == ["a"])
    }

    /// New permissions apply to what comes next: requests in flight go on, a worker that may no longer serve its
    /// types is drained (its job finishes, it gets no new one), and widening lets the refused in again.
    @Test func newPermissionsApplyToWhatComesNextAndDrainRevokedWorkers() throws {
        var broker = try Self.harness(try Self.permissions(alice: ["Echo"]))
        broker.register("w1", capacity: 2, identity: "KEY-W")
        broker.send("before", identity: "KEY-A")
        broker.core.replacePermissions(try Self.permissions(alice: ["Pay"], workers: []), now: broker.now)
        broker.send("after", identity: "KEY-A")
        #expect(broker.endings(of: "after").first?.code == "forbidden")
        #expect(broker.core.workers.values.first?.draining == true)
        #expect(broker.core.statistics.workersRevoked == 1)
        broker.answer("w1")
        #expect(broker.endings(of: "before").first?.status == .final)
        broker.core.replacePermissions(nil, now: broker.now)
        broker.send("open", identity: "KEY-A")
        #expect(broker.endings(of: "open").first?.code != "forbidden")
        #expect(broker.core.statistics.permissionsReplaced == 2)
    }

    @Test func auditRecordsSayWhoSentWhatAndHowItEnded() throws {
        var broker = try Self.harness(try Self.permissions(alice: ["Echo"]), audit: true)
        broker.register("w1", identity: "KEY-W")
        broker.send("ok", identity: "KEY-A")
        broker.answer("w1")
        broker.send("no", type: "Pay", identity: "KEY-A")
        broker.send("who", identity: "KEY-X")
        let records = broker.core.takeAuditRecords()
        let summary = records.map {
            "\(String(decoding: $0.requestID, as: UTF8.self)) \($0.event.rawValue) \($0.identity ?? "-") \($0.outcome)"
        }
        #expect(
            summary == [
                "ok accepted alice accepted", "ok ended alice final", "no refused alice forbidden",
                "who refused (unlisted) forbidden",
            ])
        let line = String(decoding: records[2].jsonLine(wallOffset: 0), as: UTF8.self)
        #expect(line.hasSuffix("}\n") && line.contains(#""intent":"Pay""#) && line.contains(#""key":"KEY-A""#))
        #expect(broker.core.takeAuditRecords().isEmpty)
    }

    @Test(arguments: [
        (Int64(0), "1970-01-01T00:00:00.000Z"), (951_782_400_123_000_000, "2000-02-29T00:00:00.123Z"),
        (1_796_000_000_123_000_000, "2026-11-30T00:53:20.123Z"),
        (4_102_444_799_999_000_000, "2099-12-31T23:59:59.999Z"),
        (1_709_210_096_789_000_000, "2024-02-29T12:34:56.789Z"),
    ])
    func auditTimesAreRFC3339InUTC(unix: Int64, expected: String) {
        #expect(AuditRecord.timestamp(unixNanoseconds: unix) == expected)
    }
}
