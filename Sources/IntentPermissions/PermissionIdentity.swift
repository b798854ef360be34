/// A named identity of a permissions file: the CURVE keys it is known by and what it may do (`Docs/PERMISSIONS.md`).
public struct PermissionIdentity: Sendable, Hashable {
    /// Its name, as logs, metrics and the audit trail show it.
    public let name: String
    /// Its CURVE public keys, as 40 characters of Z85 (what the broker's ZAP handler gives as a connection's
    /// User-Id).
    public let keys: [String]
    /// The intent types (and phases) it may send as a client.
    public let send: AccessList
    /// The intent types it may serve as a worker.
    public let serve: AccessList

    /// An identity with these keys and lists.
    public init(name: String, keys: [String], send: AccessList = .none, serve: AccessList = .none) {
        self.name = name
        self.keys = keys
        self.send = send
        self.serve = serve
    }
}
