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

    static func twoWorkerIdentities() throws -> Permissions {
        let echo = AccessList(allow: [try IntentPattern(parsing: "Echo")])
        return try Permissions(identities: [
            PermissionIdentity(name: "alice", keys: ["KEY-A", "KEY-A2"], send: echo),
            PermissionIdentity(name: "bob", keys: ["KEY-B"], send: echo),
            PermissionIdentity(name: "workers", keys: ["KEY-W", "KEY-W2"], serve: echo),
            PermissionIdentity(name: "others", keys: ["KEY-V"], serve: echo),
        ])
    }

    /// A client routing id is bound to the identity that used it, for the result TTL plus the hard limit after its
    /// last message: another identity is refused `forbidden` in the form of its command; another key of the same
    /// identity takes it over; once the binding expired, anyone may use the id.
    @Test func aClientRoutingIDIsBoundToTheIdentityThatUsedIt() throws {
        var broker = try Self.harness(try Self.twoWorkerIdentities())
        let client = Array("c1".utf8)
        let now = broker.now
        let first = broker.core.clientBindingRefusal(client: client, key: Array("KEY-A".utf8), now: now)
        #expect(first == nil)
        let refusal = broker.core.clientBindingRefusal(client: client, key: Array("KEY-B".utf8), now: now + 1)
        let refused = try #require(refusal)
        #expect(refused.identity == "bob" && refused.message.contains("in use by another identity"))
        let sameIdentity = broker.core.clientBindingRefusal(client: client, key: Array("KEY-A2".utf8), now: now + 2)
        #expect(sameIdentity == nil)
        broker.core.refuseBoundClient(
            .status(requestID: Array("r1".utf8)), client: client, refused, key: Array("KEY-B".utf8), version: 1,
            now: now + 3)
        broker.core.refuseBoundClient(
            .ping, client: client, refused, key: Array("KEY-B".utf8), version: 1, now: now + 3)
        broker.settle()
        #expect(broker.replies.last?.command == .status && broker.replies.last?.code == "forbidden")
        #expect(broker.pongs == ["c1"])
        let expiry = now + 2 + broker.core.clientBindingTTL
        let beforeExpiry = broker.core.clientBindingRefusal(client: client, key: Array("KEY-B".utf8), now: expiry - 1)
        #expect(beforeExpiry != nil)
        let atExpiry = broker.core.clientBindingRefusal(client: client, key: Array("KEY-B".utf8), now: expiry)
        #expect(atExpiry == nil)
        broker.core.sweepClientBindings(now: expiry + broker.core.clientBindingTTL)
        #expect(broker.core.clientBindings.isEmpty)
    }

    /// A worker's name (its routing id) is bound to its identity while it is registered: another identity's READY
    /// under it is refused and the registered worker keeps its jobs; the same identity (a restart) takes it over.
    @Test func aWorkerNameIsBoundToItsIdentityWhileRegistered() throws {
        var broker = try Self.harness(try Self.twoWorkerIdentities())
        broker.register("w1", identity: "KEY-W")
        broker.send("a", identity: "KEY-A")
        broker.register("w1", identity: "KEY-V")
        #expect("\(broker.controls.last?.control as Any)".contains("is registered by another identity"))
        #expect(broker.core.workers.values.map(\.identity) == [Array("KEY-W".utf8)])
        #expect(broker.delivered.map(\.request) == ["a"])
        broker.answer("w1")
        #expect(broker.endings(of: "a").first?.status == .final)
        broker.register("w1", identity: "KEY-W2")
        #expect(broker.core.workers.values.map(\.identity) == [Array("KEY-W2".utf8)])
        #expect(broker.core.statistics.forbiddenRegistrations == 1)
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
