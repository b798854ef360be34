/// Scopes within a key (`Schemas/PROTOCOL.md` section 3.4): a client whose routing id begins with `scope:NAME/`
/// is in scope NAME of its own CURVE key, so that one key (a gateway's, say) can keep the callers it speaks for
/// apart at the broker.
///
/// The broker scopes what a client does (idempotency keys, conversations, STATUS and CANCEL of its requests, the
/// journal's and transcripts' records of them) by the client's *identity*: its CURVE public key as the ZAP handler
/// gave it (40 characters of Z85; empty without CURVE), followed, for a client in a scope, by ``separator`` and the
/// scope's name. The separator is neither a Z85 character nor a name's, so an identity names one key and one scope
/// and never another's. Permissions, the audit log's key and queue lanes go by the key alone (``key(ofIdentity:)``).
///
/// ```swift
/// ClientScope.identity(key: Array("K".utf8), routingID: Array("scope:alice/gw-1".utf8))  // "K|alice"
/// ClientScope.identity(key: Array("K".utf8), routingID: Array("client-7".utf8))  // "K"
/// ```
public enum ClientScope {
    /// What a routing id that names a scope begins with: `scope:`.
    public static let prefix: [UInt8] = Array("scope:".utf8)
    /// What ends the scope's name in the routing id: `/`.
    public static let terminator = UInt8(ascii: "/")
    /// What stands between the key and the scope's name in an identity: `|` (not a Z85 character, nor a name's).
    public static let separator = UInt8(ascii: "|")
    /// The longest name, in bytes (as a permissions file's identity names).
    public static let maxNameLength = 64

    /// Whether `name` may name a scope: 1 to 64 characters of `A-Z a-z 0-9 _ . -` (the names of identities in a
    /// permissions file, `Docs/PERMISSIONS.md`).
    public static func isValidName(_ name: some Collection<UInt8>) -> Bool {
        (1...maxNameLength).contains(name.count) && name.allSatisfy(IntentTypeName.isValidByte)
    }

    /// The name of the scope `routingID` names: NAME of a routing id that begins with `scope:NAME/`. nil when it
    /// names none, or names it malformed (no `/` after at most 64 bytes, an empty name, a byte a name may not hold):
    /// such a client is in its key's own scope, as if its routing id named none.
    public static func name(inRoutingID routingID: [UInt8]) -> ArraySlice<UInt8>? {
        guard routingID.count > prefix.count, routingID.starts(with: prefix) else { return nil }
        let rest = routingID[prefix.count...]
        guard let end = rest.prefix(maxNameLength + 1).firstIndex(of: terminator) else { return nil }
        let name = rest[..<end]
        return isValidName(name) ? name : nil
    }

    /// The routing id that puts a client in scope `name`: `scope:NAME/` followed by `rest` (which keeps routing ids
    /// of one scope apart). nil when `name` is not a valid name or the routing id would be longer than 255 bytes.
    public static func routingID(scope name: String, rest: String) -> String? {
        guard isValidName(name.utf8) else { return nil }
        let routingID = "scope:\(name)/\(rest)"
        return routingID.utf8.count <= 255 ? routingID : nil
    }

    /// The identity the broker scopes a client's messages by: `key` (the CURVE public key, empty without CURVE),
    /// followed by `|` and the scope's name when `routingID` names one.
    public static func identity(key: [UInt8], routingID: [UInt8]) -> [UInt8] {
        guard let name = name(inRoutingID: routingID) else { return key }
        var identity = key
        identity.reserveCapacity(key.count + 1 + name.count)
        identity.append(separator)
        identity.append(contentsOf: name)
        return identity
    }

    /// The CURVE public key of an identity (empty without CURVE): what permissions, the audit log and queue lanes
    /// go by, whatever the scope.
    public static func key(ofIdentity identity: [UInt8]) -> [UInt8] {
        guard let end = identity.firstIndex(of: separator) else { return identity }
        return Array(identity[..<end])
    }
}
