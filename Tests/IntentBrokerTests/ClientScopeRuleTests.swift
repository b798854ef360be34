import ConciergeJSON
import IntentPermissions
import IntentWire
import Testing

@testable import IntentBroker

/// Scopes within a key (PROTOCOL.md 3.4): a routing id `scope:NAME/...` puts a client in scope NAME of its own key.
/// Idempotency keys, conversations, CANCEL and the journal go by key and scope; permissions, the audit log's key and
/// queue lanes by the key alone. The loop hands the core `ClientScope.identity(key:routingID:)`, as these tests do.
@Suite struct ClientScopeRuleTests {
    /// A stand-in for a gateway's CURVE key (40 characters of Z85, as the ZAP handler gives it).
    static let key = String(repeating: "K", count: 40)
    static let alice = "scope:alice/gateway-1"
    static let bob = "scope:bob/gateway-2"
    static let start = ConversationRuleTests.start

    /// The identity the loop gives the core for a message on connection `client` with CURVE key `key`.
    static func identity(_ key: String, _ client: String) -> String {
        String(decoding: ClientScope.identity(key: Array(key.utf8), routingID: Array(client.utf8)), as: UTF8.self)
    }

    @Test func aRoutingIDThatNamesAScopePutsTheClientInThatScopeOfItsOwnKey() {
        let key = Self.key
        #expect(Self.identity(key, "scope:alice/gateway-1") == key + "|alice")
        #expect(Self.identity(key, "scope:alice/") == key + "|alice")
        #expect(Self.identity(key, "scope:a.b_c-9/x/y") == key + "|a.b_c-9")
        #expect(
            Self.identity(key, "scope:\(String(repeating: "n", count: 64))/x") == key + "|"
                + String(repeating: "n", count: 64))
        #expect(Self.identity("", "scope:alice/x") == "|alice")
        // Two scopes of one key, the key's own scope and another key's scope of the same name: all different.
        let identities = [
            Self.identity(key, Self.alice), Self.identity(key, Self.bob), Self.identity(key, "client-1"),
            Self.identity(String(repeating: "L", count: 40), Self.alice), Self.identity("", Self.alice),
        ]
        #expect(Set(identities).count == identities.count)
        // No scope: the key alone.
        #expect(Self.identity(key, "client-1") == key)
        #expect(Self.identity("", "client-1") == "")
        #expect(ClientScope.name(inRoutingID: Array("gateway-alice-1f".utf8)) == nil)
    }

    @Test(arguments: [
        "scope:", "scope:/x", "scope:alice", "Scope:alice/x", "scope:al ice/x", "scope:al|ice/x", "scope:al:ice/x",
        "scope:\(String(repeating: "n", count: 65))/x", "scope:caf\u{E9}/x", " scope:alice/x",
    ])
    func aMalformedScopeIsNoScope(routingID: String) {
        #expect(ClientScope.name(inRoutingID: Array(routingID.utf8)) == nil)
        #expect(Self.identity(Self.key, routingID) == Self.key)
    }

    @Test func theKeyOfAnIdentityIsWhatPrecedesItsScope() {
        let key = Array(Self.key.utf8)
        #expect(ClientScope.key(ofIdentity: ClientScope.identity(key: key, routingID: Array(Self.alice.utf8))) == key)
        #expect(ClientScope.key(ofIdentity: key) == key)
        #expect(ClientScope.key(ofIdentity: Array("|alice".utf8)).isEmpty)
        #expect(ClientScope.key(ofIdentity: []).isEmpty)
    }

    @Test func aScopedRoutingIDIsMadeOnlyOfAValidName() {
        #expect(ClientScope.routingID(scope: "alice", rest: "gateway-1f") == "scope:alice/gateway-1f")
        #expect(ClientScope.routingID(scope: "al ice", rest: "x") == nil)
        #expect(ClientScope.routingID(scope: "", rest: "x") == nil)
        #expect(ClientScope.routingID(scope: "alice", rest: String(repeating: "x", count: 250)) == nil)
        let made = ClientScope.routingID(scope: "bob", rest: "gateway-2") ?? ""
        #expect(ClientScope.name(inRoutingID: Array(made.utf8)).map { Array($0) } == Array("bob".utf8))
    }

    /// Two callers behind one key (a gateway's): the same idempotency key with two bodies is two keys, and a CANCEL
    /// of one's request id from the other finds nothing (`unknown-request`, its job runs on); the same scope on
    /// another connection finds it.
    @Test func twoScopesOfOneKeyKeepTheirIdempotencyKeysAndRequestsApart() throws {
        var broker = try CoreHarness()
        broker.register("w1", capacity: 4, version: 2)
        let alice = Self.identity(Self.key, Self.alice)
        let bob = Self.identity(Self.key, Self.bob)
        broker.send("a1", client: Self.alice, body: #"{"who":"alice"}"#, key: "shared", identity: alice)
        broker.send("b1", client: Self.bob, body: #"{"who":"bob"}"#, key: "shared", identity: bob)
        #expect(broker.endings(of: "b1", client: Self.bob).isEmpty)
        #expect(broker.delivered.map(\.request) == ["a1", "b1"])
        broker.cancel("a1", client: Self.bob, identity: bob)
        let refused = try #require(broker.replies.last)
        #expect(refused.client == Self.bob && refused.command == .status && refused.code == "unknown-request")
        #expect(broker.cancels(to: "w1").isEmpty)
        // The key's own scope (no scope in the routing id) does not find it either.
        broker.cancel("a1", client: "client-9", identity: Self.key)
        #expect(broker.replies.last?.code == "unknown-request" && broker.cancels(to: "w1").isEmpty)
        let again = "scope:alice/gateway-3"
        broker.cancel("a1", client: again, identity: Self.identity(Self.key, again))
        #expect(broker.cancels(to: "w1") == ["a1"])
        // Both keys were recorded apart: each body again is its own key's replay, not a conflict.
        broker.answer("w1", request: "b1", body: #"{"done":"bob"}"#)
        broker.send("b2", client: Self.bob, body: #"{"who":"bob"}"#, key: "shared", identity: bob)
        #expect(broker.endings(of: "b2", client: Self.bob).first?.isReplay == true)
    }

    /// Without CURVE (an empty key) the scope alone keeps the two apart.
    @Test func withoutCurveTheScopeAloneKeepsIdempotencyKeysApart() throws {
        var broker = try CoreHarness()
        broker.register("w1", capacity: 4, version: 2)
        broker.send(
            "a1", client: Self.alice, body: #"{"who":"alice"}"#, key: "k", identity: Self.identity("", Self.alice))
        broker.send("b1", client: Self.bob, body: #"{"who":"bob"}"#, key: "k", identity: Self.identity("", Self.bob))
        broker.send("c1", client: "plain", body: #"{"who":"plain"}"#, key: "k")
        #expect(broker.delivered.map(\.request) == ["a1", "b1", "c1"])
    }

    @Test func aConversationBelongsToItsScopeWithinTheKey() throws {
        var broker = try ConversationRuleTests.harness()
        let alice = Self.identity(Self.key, Self.alice)
        let bob = Self.identity(Self.key, Self.bob)
        broker.turn("r1", conversation: "c1", number: 1, body: Self.start, client: Self.alice, identity: alice)
        broker.answer("w1", outcome: .stop, body: ConversationRuleTests.disambiguation)
        #expect(broker.readConversation("c1", client: Self.bob, identity: bob)?.code == "unknown-conversation")
        #expect(broker.readConversation("c1", client: "client-9", identity: Self.key)?.code == "unknown-conversation")
        broker.turn(
            "r2", conversation: "c1", number: 2, body: #"{"parameter":"recipient","option":0}"#, client: Self.bob,
            identity: bob)
        #expect(broker.endings(of: "r2", client: Self.bob).first?.code == "unknown-conversation")
        // Bob may start a conversation of the same id: his own.
        broker.turn("r3", conversation: "c1", number: 1, body: Self.start, client: Self.bob, identity: bob)
        #expect(broker.delivered.count == 2)
        let again = "scope:alice/gateway-3"
        let read = broker.readConversation("c1", client: again, identity: Self.identity(Self.key, again))
        #expect(ConversationRuleTests.conversation(read)?["state"] == "asking")
    }

    /// Permissions judge the key alone: a scope of a permitted key may send, and the audit log names the key.
    @Test func permissionsAndTheAuditLogGoByTheKeyAlone() throws {
        var broker = try PermissionRuleTests.harness(
            try PermissionRuleTests.permissions(alice: ["Echo"]), audit: true)
        broker.register("w1", identity: "KEY-W")
        broker.send("ok", client: Self.alice, identity: Self.identity("KEY-A", Self.alice))
        #expect(broker.delivered.map(\.request) == ["ok"])
        broker.send("no", type: "Pay", client: Self.bob, identity: Self.identity("KEY-A", Self.bob))
        #expect(broker.endings(of: "no", client: Self.bob).first?.body.contains(#"\"alice\" may not send Pay"#) == true)
        let records = broker.core.takeAuditRecords()
        #expect(records.map { $0.identity ?? "-" } == ["alice", "alice"])
        #expect(records.allSatisfy { $0.key == Array("KEY-A".utf8) })
    }

    /// With a permissions file, STATUS of a request in flight answers only its key and scope (PROTOCOL.md 13.3).
    @Test func withPermissionsStatusAnswersOnlyTheScopeThatSentIt() throws {
        var broker = try PermissionRuleTests.harness(try PermissionRuleTests.permissions(alice: ["Echo"]))
        broker.register("w1", identity: "KEY-W")
        broker.send("a", client: Self.alice, identity: Self.identity("KEY-A", Self.alice))
        broker.status("a", client: Self.alice, identity: "KEY-A|bob")
        #expect(broker.replies.last?.code == "unknown-request")
        broker.status("a", client: Self.alice, identity: Self.identity("KEY-A", Self.alice))
        #expect(broker.replies.last?.status == .progress)
    }

    /// A scope gets no queue lane of its own: the key's scopes share one, so naming scopes does not multiply a
    /// client's share of a full queue (the key is the heaviest client, and its newest request is shed).
    @Test func theScopesOfAKeyShareOneQueueLane() throws {
        var broker = try CoreHarness(.init(maxQueuedPerIntentType: 4))
        broker.register("w1", capacity: 1)
        for index in 0...4 {
            let client = "scope:s\(index)/x"
            broker.send("a\(index)", client: client, identity: Self.identity(Self.key, client))
        }
        #expect(broker.queued == 4)
        broker.send("b1", client: "other")
        #expect(broker.endings(of: "b1", client: "other").isEmpty)
        #expect(broker.endings(of: "a4", client: "scope:s4/x").first?.code == "busy")
    }

    /// The journal keeps the identity with its scope: after a restart the keys and requests of two scopes are still
    /// apart.
    @Test func theJournalKeepsScopesApartAcrossARestart() throws {
        var broker = try CoreHarness(.init(hardLimit: .seconds(60)), journaling: true)
        broker.register("w1", version: 2)
        broker.send("holder", deadlineMs: 30_000)
        let alice = Self.identity(Self.key, Self.alice)
        let bob = Self.identity(Self.key, Self.bob)
        broker.send("a1", deadlineMs: 30_000, client: Self.alice, body: #"{"who":"alice"}"#, key: "k", identity: alice)
        try broker.restart()
        broker.register("w2", capacity: 4, version: 2)
        broker.send("b1", deadlineMs: 30_000, client: Self.bob, body: #"{"who":"bob"}"#, key: "k", identity: bob)
        #expect(broker.endings(of: "b1", client: Self.bob).isEmpty)
        broker.cancel("a1", client: "scope:bob/gateway-4", identity: bob)
        #expect(broker.replies.last?.code == "unknown-request")
        let again = "scope:alice/gateway-3"
        broker.cancel("a1", client: again, identity: Self.identity(Self.key, again))
        #expect(broker.cancels(to: "w2") == ["a1"])
    }
}
