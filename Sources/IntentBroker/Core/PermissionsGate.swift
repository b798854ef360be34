import IntentPermissions
import IntentVocabulary
import IntentWire

/// The permissions file in force, as the core asks it (`Docs/PERMISSIONS.md`, PROTOCOL.md 13.3): which identity a
/// connection's CURVE key maps to, and whether that identity may send or serve an intent type.
///
/// A key is looked up once: its identity (or that the file does not list it) is kept by the key's bytes, as the ZAP
/// handler gave them, so a request costs a hash lookup of the key, then one of its type in the identity's allow list.
/// The cache is bounded by the keys the broker admits (its CURVE allowlists); past ``maxCachedKeys`` it starts again.
struct PermissionsGate {
    /// An identity that may be refused, for messages and metrics: the file's name, or ``unlisted`` for a key the file
    /// does not list (or a connection without a key).
    struct Refused {
        let identity: String
        let message: String
    }

    /// The name refusals of keys the file does not list are counted under.
    static let unlisted = "(unlisted)"
    static let maxCachedKeys = 65_536

    let permissions: Permissions
    /// The identity of each key seen, by key bytes (nil for a key the file does not list).
    private var byKey: [[UInt8]: PermissionIdentity?] = [:]

    init(_ permissions: Permissions) {
        self.permissions = permissions
    }

    /// The identity of a connection's CURVE key (the ZAP User-Id, 40 characters of Z85), if the file lists it.
    mutating func identity(ofKey key: [UInt8]) -> PermissionIdentity? {
        if let known = byKey[key] { return known }
        let identity = permissions.identity(forKey: String(decoding: key, as: UTF8.self))
        if byKey.count >= Self.maxCachedKeys { byKey.removeAll(keepingCapacity: true) }
        byKey[key] = .some(identity)
        return identity
    }

    /// The name of the identity of `key`, or ``unlisted``.
    mutating func name(ofKey key: [UInt8]) -> String {
        identity(ofKey: key)?.name ?? Self.unlisted
    }

    /// Whether two keys belong to one identity of the file (a key the file does not list belongs to none).
    mutating func sameIdentity(_ first: [UInt8], _ second: [UInt8]) -> Bool {
        guard let one = identity(ofKey: first), let other = identity(ofKey: second) else { return false }
        return one.name == other.name
    }

    /// nil when the identity of `key` may send `type` in `phase` (every phase of a lifecycle); else why not.
    mutating func refusal(toSend type: [UInt8], phase: RequestPhase, key: [UInt8]) -> Refused? {
        guard let identity = identity(ofKey: key) else {
            return Refused(
                identity: Self.unlisted,
                message: "this client's key is not in the broker's permissions file: it may send nothing")
        }
        if identity.send.permits(type: type, phase: phase) { return nil }
        return Refused(
            identity: identity.name,
            message: "identity \"\(identity.name)\" may not send \(Self.display(type)) (\(phase.rawValue))")
    }

    /// nil when the identity of `key` may serve every one of `types` (a worker serves a type in every phase); else
    /// why not, naming the types it may not serve.
    mutating func refusal(toServe types: [[UInt8]], key: [UInt8]) -> Refused? {
        guard let identity = identity(ofKey: key) else {
            return Refused(
                identity: Self.unlisted,
                message: "this worker's key is not in the broker's permissions file: it may serve nothing")
        }
        let refused = types.filter { !identity.serve.permitsWhole(type: $0) }
        if refused.isEmpty { return nil }
        return Refused(
            identity: identity.name,
            message: "identity \"\(identity.name)\" may not serve \(refused.map(Self.display).joined(separator: ", "))")
    }

    private static func display(_ type: [UInt8]) -> String {
        type.withUnsafeBytes { WireText.display($0) }
    }
}
