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
}
