import IntentWire
import ZeroMQ

/// Events in: each message is decoded with IntentWire's decoders and handed to the core as one event.
extension BrokerLoop {
    func clientMessage(_ message: inout ZMQMultipart) {
        let client = clientIDs.bytes(message, frame: 0)
        let command: ClientCommand
        do throws(ClientMessageError) {
            command = try message.withFrames(from: 1) { frames, dropped throws(ClientMessageError) in
                try clientDecoder.decode(WireFrames(frames, dropped: dropped))
            }
        } catch {
            core.clientMessageRejected(
                client: client, error, version: Self.answerVersion(message), now: MonotonicTime.now())
            return
        }
        if core.permissions != nil {
            // A routing id bound to another identity's key (Docs/PERMISSIONS.md, "Bound names"): the key alone.
            let key = peerKey(message)
            let now = MonotonicTime.now()
            if let refused = core.clientBindingRefusal(client: client, key: key, now: now) {
                return core.refuseBoundClient(
                    command, client: client, refused, key: key, version: Self.answerVersion(message), now: now)
            }
        }
        switch command {
        case .request(let request):
            // Only a keyed request needs its body's fingerprint (to tell a retry from a conflicting reuse).
            let fingerprint =
                request.idempotencyKey == nil
                ? nil
                : message.withBytes(1 + ClientRequest.bodyIndex) { BodyFingerprint($0, seeds: core.fingerprintSeeds) }
            // A key's scope is the client's identity: its CURVE public key (the user id our ZAP handler gave it),
            // with the scope its routing id names (PROTOCOL.md 3.4); without either, one scope all clients share
            // (4.10.1). It also lets a CANCEL from another connection of the same identity find the request.
            let identity = clientIdentity(message, client: client)
            let body = message.take(1 + ClientRequest.bodyIndex)
            core.request(
                request, client: client, body: body, fingerprint: fingerprint, identity: identity,
                now: MonotonicTime.now())
        case .status(let id):
            core.status(
                client: client, requestID: id, identity: clientIdentity(message, client: client),
                version: Self.answerVersion(message),
                now: MonotonicTime.now())
        case .ping:
            core.ping(client: client, version: Self.answerVersion(message))
        case .cancel(let id):
            core.cancel(
                client: client, requestID: id, identity: clientIdentity(message, client: client),
                version: Self.answerVersion(message), now: MonotonicTime.now())
        case .turn(let turn):
            // Conversations are few next to requests: the body is copied, and the core parses it.
            let body = message.withBytes(1 + ClientTurn.bodyIndex) { Array($0) }
            core.turn(
                turn, client: client, body: body, identity: clientIdentity(message, client: client),
                now: MonotonicTime.now())
        case .readConversation(let id):
            core.readConversation(
                id: id, client: client, identity: clientIdentity(message, client: client),
                version: Self.answerVersion(message),
                now: MonotonicTime.now())
        case .endConversation(let id):
            core.endConversation(
                id: id, client: client, identity: clientIdentity(message, client: client),
                version: Self.answerVersion(message),
                now: MonotonicTime.now())
        }
    }

    /// The identity the core scopes a client's message by (PROTOCOL.md 3.4): its CURVE public key as our ZAP handler
    /// gave it (empty without CURVE), followed by the scope its routing id `client` names, if any. Permissions and
    /// bound names go by the key alone (``peerKey(_:)``; the core takes it back out with
    /// `ClientScope.key(ofIdentity:)`).
    private func clientIdentity(_ message: borrowing ZMQMultipart, client: [UInt8]) -> [UInt8] {
        ClientScope.identity(key: peerKey(message), routingID: client)
    }

    /// The sender's CURVE public key as our ZAP handler gave it (the message's `User-Id`), empty without CURVE.
    private func peerKey(_ message: borrowing ZMQMultipart) -> [UInt8] {
        guard sockets?.zap != nil else { return [] }
        return message.property(1, "User-Id").map { Array($0.utf8) } ?? []
    }

    /// The client protocol version a message's answers use: its signature's (1 when it is not one the broker
    /// speaks: check 2 answers that in version 1). A REQUEST carries its own (``ClientRequest/version``), so the hot
    /// path never looks at the signature twice.
    private static func answerVersion(_ message: borrowing ZMQMultipart) -> UInt8 {
        guard message.count > 1 else { return 1 }
        return message.withBytes(1) { ClientMessageDecoder.version(ofSignature: $0) } ?? 1
    }

    func workerMessage(_ message: inout ZMQMultipart) {
        let routingID = workerIDs.bytes(message, frame: 0)
        // STATS (section 5.14): a query any peer may send, registered or not (the core answers it even while the
        // journal is unavailable). One frame compare on the hot path.
        if message.count > CIP.Frames.stats, message.equals(2, CIP.Worker.stats) {
            do throws(WorkerMessageError) {
                let query = try message.withFrames(from: 1) { frames, dropped throws(WorkerMessageError) in
                    try workerDecoder.isStatsQuery(WireFrames(frames, dropped: dropped))
                }
                if query {
                    return core.statsRequested(
                        by: routingID, version: Self.workerVersion(message), now: MonotonicTime.now())
                }
            } catch {
                core.workerMessageRejected(
                    routingID: routingID, error, version: Self.workerVersion(message), now: MonotonicTime.now())
                return
            }
        }
        // The stored table, not `isRegistered(_:)`: calling a non-mutating method of the core from here copies it.
        let registered = core.workerIDs[ByteKey(routingID)] != nil
        let command: WorkerCommand
        do throws(WorkerMessageError) {
            command = try message.withFrames(from: 1) { frames, dropped throws(WorkerMessageError) in
                try workerDecoder.decode(WireFrames(frames, dropped: dropped), isRegistered: registered)
            }
        } catch {
            core.workerMessageRejected(
                routingID: routingID, error, version: Self.workerVersion(message), now: MonotonicTime.now())
            return
        }
        var body: ZMQMessage?
        var version: UInt8 = 1
        switch command {
        case .result(let result):
            if let spans { spans.jobAnswered(result.jobID, outcome: result.outcome) }
            // Its own allocation (ZMQMultipart.takeCompacted): a final reply is kept for STATUS and replays, and the
            // frame as received would keep libzmq's whole receive buffer (8 KiB and more) for as long.
            body = message.takeCompacted(1 + WorkerResult.bodyIndex)
        case .unregistered: version = Self.workerVersion(message)
        case .ready:
            // Its permissions are looked up by its CURVE key (PROTOCOL.md 13.3).
            return core.workerMessage(
                command, from: routingID, resultBody: nil, identity: peerKey(message), now: MonotonicTime.now())
        default: break
        }
        core.workerMessage(command, from: routingID, resultBody: body, version: version, now: MonotonicTime.now())
    }

    /// The worker protocol version of a message's signature (1 when it is not one the broker speaks).
    private static func workerVersion(_ message: borrowing ZMQMultipart) -> UInt8 {
        guard message.count > 1 else { return 1 }
        return message.withBytes(1) { WorkerMessageDecoder.version(ofSignature: $0) } ?? 1
    }
}
