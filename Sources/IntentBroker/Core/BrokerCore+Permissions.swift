import IntentPermissions
import IntentWire
import Logging

/// Permissions (`Docs/PERMISSIONS.md`, PROTOCOL.md 13.3): refusals, and new permissions while running.
extension BrokerCore {
    /// What a refusal refused: a request (`send`) or a registration (`serve`).
    enum ForbiddenKind: String {
        case send
        case serve
    }

    /// Counts a `forbidden` refusal and logs it, at most once per interval per identity and kind (the answer itself
    /// is the caller's to send).
    mutating func forbidden(
        _ refused: PermissionsGate.Refused, _ kind: ForbiddenKind, peer: [UInt8], intentType: [UInt8]? = nil,
        phase: RequestPhase? = nil, worker: String? = nil, now: UInt64
    ) {
        switch kind {
        case .send: statistics.forbiddenRequests += 1
        case .serve: statistics.forbiddenRegistrations += 1
        }
        metrics?.forbidden(identity: refused.identity, kind: kind.rawValue)
        var metadata: Logger.Metadata = ["identity": "\(refused.identity)", "kind": "\(kind.rawValue)"]
        if let intentType { metadata["intent"] = "\(intentType.withUnsafeBytes { WireText.display($0) })" }
        if let phase { metadata["phase"] = "\(phase.rawValue)" }
        if let worker { metadata["worker"] = "\(worker)" }
        metadata["reason"] = "\(refused.message)"
        warn(.forbidden, peer: Array(refused.identity.utf8) + [kind == .send ? 0 : 1], "forbidden", metadata, now: now)
    }

    /// Puts `permissions` in force (nil: every admitted key may do everything). Requests already accepted go on;
    /// new requests and registrations are decided by the new permissions. A registered worker that may no longer
    /// serve one of its types is drained: it gets no new job, and the jobs it holds finish (none is lost).
    mutating func replacePermissions(_ permissions: Permissions?, now: UInt64) {
        self.permissions = permissions.map(PermissionsGate.init)
        if permissions == nil { clientBindings.removeAll() }
        statistics.permissionsReplaced += 1
        logger.info(
            "permissions in force",
            metadata: [
                "identities": "\(permissions.map { "\($0.identities.count)" } ?? "none: every key may do everything")"
            ])
        guard self.permissions != nil else { return }
        for worker in workers.values where !worker.draining {
            let types = worker.intentTypes.map { intentTypes[$0].name }
            guard let refused = self.permissions?.refusal(toServe: types, key: worker.identity) else { continue }
            worker.draining = true
            statistics.workersRevoked += 1
            logger.warning(
                "worker drained: the new permissions do not let it serve its intent types",
                metadata: [
                    "worker": "\(worker.name)", "identity": "\(refused.identity)", "reason": "\(refused.message)",
                ])
        }
    }

    // MARK: Bound names

    /// How long a client routing id stays bound to its key after the id's last message: the result TTL (STATUS may
    /// ask for its results that long) plus the hard limit (a request in flight may end that late).
    var clientBindingTTL: UInt64 { configuration.resultTTL.nanoseconds &+ settings.hardLimit }

    /// With permissions in force: nil when CURVE key `key` may use routing id `client` (the id is then bound to it,
    /// or stays bound for longer); else why not: the id is bound to a key of another identity. Without permissions,
    /// always nil.
    mutating func clientBindingRefusal(client: [UInt8], key: [UInt8], now: UInt64) -> PermissionsGate.Refused? {
        guard permissions != nil else { return nil }
        let id = ByteKey(client)
        if let bound = clientBindings[id], now < bound.until, bound.key != key,
            permissions?.sameIdentity(bound.key, key) != true
        {
            return PermissionsGate.Refused(
                identity: permissions?.name(ofKey: key) ?? PermissionsGate.unlisted,
                message: "the routing id \(Self.display(client)) is in use by another identity")
        }
        clientBindings[id] = ClientBinding(key: key, until: now &+ clientBindingTTL)
        return nil
    }

    /// A client message from a routing id bound to another identity: answered `forbidden` in the form its command
    /// expects (a PING still gets its PONG), and nothing else changes.
    mutating func refuseBoundClient(
        _ command: ClientCommand, client: [UInt8], _ refused: PermissionsGate.Refused, key: [UInt8], version: UInt8,
        now: UInt64
    ) {
        forbidden(refused, .send, peer: client, now: now)
        let message = refused.message
        switch command {
        case .request(let request):
            if settings.auditing {
                audit(
                    .refused, key: RequestKey(client: client, id: request.requestID), identity: key,
                    intentType: request.intentType, phase: request.phase, outcome: WireErrorCode.forbidden.rawValue,
                    now: now)
            }
            reject(
                client: client, requestID: request.requestID, phase: request.phase.name, version: request.version,
                .forbidden, message)
        case .turn(let turn):
            if settings.auditing {
                audit(
                    .refused, key: RequestKey(client: client, id: turn.requestID), identity: key, intentType: [],
                    phase: nil, outcome: WireErrorCode.forbidden.rawValue, now: now)
            }
            reject(client: client, requestID: turn.requestID, phase: "", version: turn.version, .forbidden, message)
        case .status(let id), .cancel(let id):
            reject(client: client, requestID: id, phase: "", version: version, .forbidden, message, command: .status)
        case .readConversation(let id), .endConversation(let id):
            reject(
                client: client, requestID: id, phase: "", version: version, .forbidden, message, command: .conversation)
        case .ping:
            actions.append(.pong(client: client, version: version))
        }
    }

    /// Drops the bindings of client routing ids that expired (every heartbeat at most).
    mutating func sweepClientBindings(now: UInt64) {
        clientBindings = clientBindings.filter { now < $0.value.until }
        nextBindingSweep = now &+ settings.heartbeat
    }

    /// nil when CURVE key `key` may register under `routingID`: no worker is registered under it, or it is one of
    /// the same identity (a restart taking its name over); else why not.
    mutating func workerNameRefusal(_ routingID: [UInt8], name: String, key: [UInt8]) -> PermissionsGate.Refused? {
        guard permissions != nil, let previous = workerIDs[ByteKey(routingID)], let worker = workers[previous],
            worker.identity != key, permissions?.sameIdentity(worker.identity, key) != true
        else { return nil }
        return PermissionsGate.Refused(
            identity: permissions?.name(ofKey: key) ?? PermissionsGate.unlisted,
            message: "the worker name \"\(name)\" is registered by another identity")
    }

    private static func display(_ bytes: [UInt8]) -> String {
        "\"" + bytes.withUnsafeBytes { WireText.display($0) } + "\""
    }
}
