import IntentPermissions
import IntentWire

/// The audit log's records (``AuditRecord``, `--audit-log`): the core makes them, the shell hands them to the
/// writer after each batch.
extension BrokerCore {
    /// Records one event of the request `key` (the connection's routing id and the request id) sent by `identity`
    /// (a CURVE key, with a scope or not: the record names the key alone; the routing id names the scope).
    mutating func audit(
        _ event: AuditRecord.Event, key: RequestKey, identity: [UInt8], intentType: [UInt8], phase: RequestPhase?,
        outcome: String, now: UInt64
    ) {
        let curveKey = ClientScope.key(ofIdentity: identity)
        let name: String? =
            if permissions == nil { nil } else {
                permissions?.identity(ofKey: curveKey)?.name ?? PermissionsGate.unlisted
            }
        auditRecords.append(
            AuditRecord(
                event: event, at: now, key: curveKey, identity: name, intentType: intentType, phase: phase,
                outcome: outcome, requestID: key.id, client: key.client))
    }

    /// The records made since the last call.
    mutating func takeAuditRecords() -> [AuditRecord] {
        var taken: [AuditRecord] = []
        swap(&taken, &auditRecords)
        return taken
    }
}
