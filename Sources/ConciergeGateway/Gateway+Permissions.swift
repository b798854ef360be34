import IntentPermissions
import IntentWire

/// Permissions at the gateway (`Docs/PERMISSIONS.md`): a bearer token's identity may send only what its `send` list
/// in the permissions file allows.
extension Gateway {
    /// Throws 403 `forbidden` when `identity` may not send `intentType` in `phase` (a conversation: `lifecycle`,
    /// every phase); an identity the file does not name may send nothing. Without permissions, nothing is checked.
    func checkPermission(_ identity: GatewayIdentity, intentType: String, phase: RequestPhase) throws(GatewayProblem) {
        guard let sendLists else { return }
        guard let list = sendLists[identity.name] else {
            throw GatewayProblem(
                code: "forbidden", detail: "identity \"\(identity.name)\" is not in the gateway's permissions file")
        }
        guard list.permits(type: Array(intentType.utf8), phase: phase) else {
            throw GatewayProblem(
                code: "forbidden",
                detail: "identity \"\(identity.name)\" may not send \(intentType) (\(phase.rawValue))")
        }
    }
}
