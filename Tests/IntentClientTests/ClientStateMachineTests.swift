import IntentWire
import Logging
import Testing

@testable import IntentClient

/// The client's rules, without sockets: each test hands the state machine events and reads what it sent and what it
/// asked of the callers (`Schemas/PROTOCOL.md` sections 4.9, 4.10.2, 6.3, 7.2 and 7.3).
@Suite struct ClientStateMachineTests {
    /// Callers are numbers: a request's stream, a STATUS or CANCEL caller, a PING caller.
    typealias Machine = ClientStateMachine<Int, Int, Int>

    /// A connection in memory: what was sent, which endpoints it moved to, and the events its monitor holds.
    struct Connection: ClientConnection {
        var sent = WireFrameList()
        /// libzmq gave the connection up: every message is refused.
        var refuses = false
        var moves: [String] = []
        var events: [ClientConnectionEvent] = []

        mutating func append(_ bytes: UnsafeRawBufferPointer, more: Bool) -> Bool {
            refuses ? false : sent.append(bytes, more: more)
        }
        mutating func append(body: [UInt8], more: Bool) -> Bool {
            refuses ? false : sent.append(body: body, more: more)
        }
        mutating func reconnect(to endpoint: String) -> Bool {
            moves.append(endpoint)
            return true
        }
        mutating func takeEvents(handshakeSucceededBefore: Bool) -> [ClientConnectionEvent] {
            defer { events.removeAll() }
            return events
        }
        /// The messages sent, as text, and forgotten.
        mutating func take() -> [String] {
            defer { sent = WireFrameList() }
            return sent.messages.map { $0.map { String(decoding: $0, as: UTF8.self) }.joined(separator: " ") }
        }
    }

    static let second: UInt64 = 1_000_000_000
    static let start: UInt64 = 100 * second

    var machine: Machine
    var connection = Connection()

    init(endpoints: [String] = ["tcp://a"], configure: (inout ClientConfiguration) -> Void = { _ in }) {
        var configuration = ClientConfiguration(brokerEndpoints: endpoints, routingID: "c")
        configure(&configuration)
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        machine = Machine(configuration: configuration, logger: logger, now: Self.start)
    }

    init() { self.init(endpoints: ["tcp://a"]) }

    /// The REQUEST frames `ConciergeClient.send` makes.
    static func request(_ id: String, type: String = "Echo") -> [[UInt8]] {
        var list = WireFrameList()
        ClientMessageEncoder.request(
            into: &list, requestID: id, intentType: type, phase: .lifecycle, deadlineMilliseconds: nil,
            body: .bytes(Array(#"{"intent":{}}"#.utf8)))
        return list.frames
    }

    static func reply(_ id: String, _ status: Reply.Status, body: String = "{}") -> Reply {
        Reply(requestID: id, status: status, phase: "handle", body: Array(body.utf8))
    }

    static func error(_ id: String, _ code: WireErrorCode, extra: String = "") -> Reply {
        reply(id, .error, body: #"{"code":"\#(code.rawValue)","message":"m"\#(extra)}"#)
    }

    /// The machine's actions, as text, and forgotten.
    mutating func actions() -> [String] {
        defer { machine.actions.removeAll() }
        return machine.actions.map { action in
            switch action {
            case .yield(let stream, let reply): "yield \(stream) \(reply.status)"
            case .finish(let stream, nil): "finish \(stream)"
            case .finish(let stream, let error?): "finish \(stream) \(error.code)"
            case .resume(let waiter, .success(let reply)): "resume \(waiter) \(reply.status)"
            case .resume(let waiter, .failure(let error)): "resume \(waiter) \(error.code)"
            case .resumePing(let waiter, nil): "pong \(waiter)"
            case .resumePing(let waiter, let error?): "pong \(waiter) \(error.code)"
            }
        }
    }

    mutating func send(_ id: String, stream: Int, serial: UInt64 = 1, type: String = "Echo", at now: UInt64 = start) {
        machine.commands(
            [.request(id: id, serial: serial, frames: Self.request(id, type: type), stream: stream)], now: now,
            connection: &connection)
    }

    mutating func event(_ event: ClientConnectionEvent, at now: UInt64 = start) {
        machine.connectionEvent(event, now: now, connection: &connection)
    }

    // MARK: Requests

    @Test mutating func aRequestIsSentAndItsFinalReplyEndsItsStreamAfterAProgressReply() {
        send("r1", stream: 1)
        #expect(connection.take() == [#"CIPC01 REQUEST r1 Echo lifecycle  {"intent":{}}"#])
        machine.received(Self.reply("r1", .progress), isStatus: false, now: Self.start)
        #expect(actions() == ["yield 1 progress"])
        machine.received(Self.reply("r1", .final), isStatus: false, now: Self.start)
        #expect(actions() == ["yield 1 final", "finish 1"])
        #expect(machine.pending.isEmpty && !machine.isBusy)
    }

    @Test mutating func aSecondRequestWithAnIdInFlightFailsDuplicateRequestUnsent() {
        send("r1", stream: 1)
        send("r1", stream: 2, serial: 2)
        #expect(actions() == ["finish 2 duplicate-request"])
        #expect(connection.take().count == 1)
    }

    @Test mutating func aRequestThatCannotBeSentFailsWithTheHandshakeFailureThatMadeLibzmqGiveUp() {
        connection.refuses = true
        connection.events = [.handshakeFailed("the broker refused this client's key")]
        send("r1", stream: 1)
        #expect(actions() == ["finish 1 handshake-failed"])
        // Later commands fail at once with it.
        machine.commands([.status(id: "r1", waiter: 7)], now: Self.start, connection: &connection)
        #expect(actions() == ["resume 7 handshake-failed"])
    }

    // MARK: Cancellation

    @Test mutating func aCallerThatStopsListeningSendsCancelOnceAndItsEndingIsDropped() {
        send("r1", stream: 1)
        _ = connection.take()
        machine.commands([.abandon(id: "r1", serial: 1)], now: Self.start, connection: &connection)
        machine.commands([.abandon(id: "r1", serial: 1)], now: Self.start, connection: &connection)
        #expect(connection.take() == ["CIPC02 CANCEL r1"])
        machine.received(Self.error("r1", WireErrorCode("cancelled")), isStatus: false, now: Self.start)
        #expect(actions().isEmpty)
        #expect(machine.pending.isEmpty)
    }

    @Test mutating func cancelOfARequestInFlightAnswersWithItsEnding() {
        send("r1", stream: 1)
        machine.commands([.cancel(id: "r1", waiter: 5)], now: Self.start, connection: &connection)
        machine.received(Self.error("r1", WireErrorCode("cancelled")), isStatus: false, now: Self.start)
        #expect(actions() == ["yield 1 error", "finish 1", "resume 5 error"])
    }

    @Test mutating func aBrokerWithoutCancelLeavesTheRequestRunningAndTheCancelCallerIsTold() {
        send("r1", stream: 1)
        machine.commands([.cancel(id: "r1", waiter: 5)], now: Self.start, connection: &connection)
        machine.received(Self.error("r1", .unknownCommand), isStatus: false, now: Self.start)
        #expect(actions() == ["resume 5 cancel-unsupported"])
        #expect(machine.pending["r1"] != nil)
    }

    // MARK: Idle

    @Test mutating func anIdleClientHasNothingToWakeForAndABusyOneWakesForItsHeartbeat() {
        event(.handshakeSucceeded)
        // Idle long after the last message heard: no heartbeat is due (the loop would otherwise spin at once).
        let later = Self.start + 30 * Self.second
        machine.tick(now: later, connection: &connection)
        #expect(machine.wakeTime > later + 60 * Self.second)
        #expect(connection.take().isEmpty)
        // A request makes it busy: it wakes one heartbeat interval after now to PING a silent broker.
        send("r1", stream: 1, at: later)
        _ = connection.take()
        #expect(machine.wakeTime == later + Self.second)
        machine.tick(now: later + Self.second, connection: &connection)
        #expect(connection.take() == ["CIPC01 PING"])
    }

    // MARK: Reconnecting and the sweep

    @Test mutating func afterAReconnectTheClientAsksStatusAboutEveryRequestSentOnTheLostConnection() {
        event(.handshakeSucceeded)
        send("r1", stream: 1)
        _ = connection.take()
        event(.disconnected)
        send("r2", stream: 2)  // queued while the connection is down: it reaches the next broker in order
        _ = connection.take()
        event(.handshakeSucceeded)
        #expect(connection.take() == ["CIPC01 STATUS r1"])
        // The broker no longer knows r1: it ends brokerRestarted, and its REPLY, if one came, would be ignored.
        machine.received(Self.error("r1", .unknownRequest), isStatus: true, now: Self.start)
        #expect(actions() == ["finish 1 broker-restarted"])
        #expect(machine.pending.keys.sorted() == ["r2"])
    }

    @Test mutating func aSweepAnswerInProgressKeepsTheRequestWaitingAndAStoredEndingEndsIt() {
        event(.handshakeSucceeded)
        send("r1", stream: 1)
        event(.disconnected)
        event(.handshakeSucceeded)
        machine.received(Self.reply("r1", .progress), isStatus: true, now: Self.start)
        #expect(actions().isEmpty)
        #expect(machine.pending["r1"] != nil)
        event(.disconnected)
        event(.handshakeSucceeded)
        machine.received(Self.reply("r1", .final), isStatus: true, now: Self.start)
        #expect(actions() == ["yield 1 final", "finish 1"])
    }

    @Test mutating func statusAndCancelQueriesOfALostConnectionAreSentAgainAfterTheStatusQueriesOfTheSweep() {
        event(.handshakeSucceeded)
        send("r1", stream: 1)
        machine.commands(
            [.status(id: "r0", waiter: 2), .abandon(id: "r1", serial: 1)], now: Self.start, connection: &connection)
        _ = connection.take()
        event(.disconnected)
        event(.handshakeSucceeded)
        #expect(connection.take() == ["CIPC01 STATUS r0", "CIPC01 STATUS r1", "CIPC02 CANCEL r1"])
        // The caller's query is answered by the first STATUS answer about r0.
        machine.received(Self.error("r0", .unknownRequest), isStatus: true, now: Self.start)
        #expect(actions() == ["resume 2 error"])
    }

    @Test mutating func anUnavailableBrokerCannotSettleASweepAndTheRequestWaitsForTheNextOne() {
        event(.handshakeSucceeded)
        send("r1", stream: 1)
        event(.disconnected)
        event(.handshakeSucceeded)
        machine.received(Self.error("r1", .unavailable), isStatus: true, now: Self.start)
        #expect(actions().isEmpty)
        #expect(machine.pending["r1"] != nil)
    }

    // MARK: Following the active broker

    @Test mutating func aSilentBrokerIsLeftForTheNextEndpointAndUnsentRequestsGoThere() {
        self = Self(endpoints: ["tcp://a", "tcp://b"])
        send("r1", stream: 1)  // never arrived: no handshake yet
        _ = connection.take()
        machine.tick(now: Self.start + 3 * Self.second + 1, connection: &connection)
        #expect(connection.moves == ["tcp://b"])
        #expect(connection.take() == [#"CIPC01 REQUEST r1 Echo lifecycle  {"intent":{}}"#])
        #expect(machine.rotation.current == "tcp://b")
    }

    @Test mutating func noHandshakeWithinAHeartbeatMovesToTheNextEndpoint() {
        self = Self(endpoints: ["tcp://a", "tcp://b"])
        machine.tick(now: Self.start + Self.second / 2, connection: &connection)
        #expect(connection.moves.isEmpty)
        machine.tick(now: Self.start + Self.second + 1, connection: &connection)
        #expect(connection.moves == ["tcp://b"])
    }

    @Test mutating func anUnavailableAnswerEndsTheRequestAndMovesToTheNextEndpoint() {
        self = Self(endpoints: ["tcp://a", "tcp://b"])
        event(.handshakeSucceeded)
        send("r1", stream: 1)
        machine.received(Self.error("r1", .unavailable), isStatus: false, now: Self.start)
        #expect(actions() == ["yield 1 error", "finish 1"])
        machine.tick(now: Self.start, connection: &connection)
        #expect(connection.moves == ["tcp://b"])
    }

    @Test mutating func requestsInFlightFailConnectionLostOnlyAfterTheReconnectTimeout() {
        self = Self { $0.reconnectTimeout = .seconds(5) }
        event(.handshakeSucceeded)
        send("r1", stream: 1)
        event(.disconnected, at: Self.start + Self.second)
        machine.tick(now: Self.start + 5 * Self.second, connection: &connection)
        #expect(!actions().contains("finish 1 connection-lost"))
        machine.tick(now: Self.start + 6 * Self.second, connection: &connection)
        #expect(actions().contains("finish 1 connection-lost"))
        #expect(!machine.isBusy)
    }

    @Test mutating func aBusyClientPingsItsBrokerEveryHeartbeatAndAPongAnswersPingCallers() {
        event(.handshakeSucceeded)
        send("r1", stream: 1)
        _ = connection.take()
        machine.tick(now: Self.start + Self.second, connection: &connection)
        #expect(connection.take() == ["CIPC01 PING"])
        machine.commands([.ping(9)], now: Self.start + Self.second, connection: &connection)
        machine.received(nil, isStatus: false, now: Self.start + Self.second)
        #expect(actions() == ["pong 9"])
    }

    // MARK: Pushback and throttle

    @Test mutating func aBusyRefusalWithPushbackRefusesLaterRequestsOfItsTypeUnsent() {
        event(.handshakeSucceeded)
        send("r1", stream: 1)
        machine.received(
            Self.error("r1", .busy, extra: #","pushback_rate":1,"pushback_ms":60000"#), isStatus: false,
            now: Self.start)
        _ = actions()
        _ = connection.take()
        for index in 2...5 { send("r\(index)", stream: index, at: Self.start + 1) }
        let refused = actions().filter { $0.hasSuffix("throttled") }
        #expect(refused.count >= 3)
        #expect(connection.take().count + refused.count == 4)
        // Another intent type is not held back.
        send("other", stream: 9, type: "Other", at: Self.start + 1)
        #expect(actions().isEmpty)
    }

    @Test mutating func closingFailsEveryoneWaiting() {
        send("r1", stream: 1)
        machine.commands([.status(id: "r0", waiter: 2), .ping(3)], now: Self.start, connection: &connection)
        machine.close()
        #expect(actions().sorted() == ["finish 1 closed", "pong 3 closed", "resume 2 closed"])
    }
}
