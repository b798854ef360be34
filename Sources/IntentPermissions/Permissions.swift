import ConciergeJSON
import IntentVocabulary

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The contents of a permissions file (`Docs/PERMISSIONS.md`, `Schemas/json/permissions.schema.json`): named
/// identities, each with its CURVE public keys, what it may send and what it may serve.
///
/// Looking a connection's identity up is one hash lookup of its key; deciding a request is a hash lookup of its type
/// in the identity's allow list, then its deny entries (few).
public struct Permissions: Sendable {
    /// The identities, in file order.
    public let identities: [PermissionIdentity]
    private let byKey: [String: Int]

    /// Permissions with these identities.
    /// - Throws: ``PermissionsError`` `permissions-duplicate-key` when two identities list the same key.
    public init(identities: [PermissionIdentity]) throws(PermissionsError) {
        var byKey: [String: Int] = [:]
        for (index, identity) in identities.enumerated() {
            for key in identity.keys {
                if let other = byKey.updateValue(index, forKey: key), other != index {
                    throw PermissionsError(
                        code: .duplicateKey,
                        message:
                            "the key \(key) is listed for both \"\(identities[other].name)\" and \"\(identity.name)\"")
                }
            }
        }
        self.identities = identities
        self.byKey = byKey
    }

    /// The identity a CURVE public key (40 characters of Z85) maps to, if any.
    public func identity(forKey z85: String) -> PermissionIdentity? {
        byKey[z85].map { identities[$0] }
    }

    /// The identity named `name`, if any.
    public func identity(named name: String) -> PermissionIdentity? {
        identities.first { $0.name == name }
    }

    /// Reads and checks a permissions file.
    /// - Throws: ``PermissionsError``: `permissions-unreadable`, `permissions-malformed` (naming the place) or
    ///   `permissions-duplicate-key`.
    public static func load(path: String) throws(PermissionsError) -> Permissions {
        guard let bytes = readFile(path) else {
            throw PermissionsError(
                code: .unreadable, message: "cannot read \(path): \(String(cString: strerror(errno)))")
        }
        return try parse(bytes)
    }

    /// Parses the JSON of a permissions file.
    /// - Throws: ``PermissionsError``.
    public static func parse(_ bytes: [UInt8]) throws(PermissionsError) -> Permissions {
        let document: JSONValue
        do {
            document = try JSONValue.parse(bytes)
        } catch {
            throw PermissionsError(code: .malformed, message: "not JSON: \(error)")
        }
        return try PermissionsDocument(document).permissions()
    }

    private static func readFile(_ path: String) -> [UInt8]? {
        guard let file = fopen(path, "rb") else { return nil }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = fread(&chunk, 1, chunk.count, file)
            if count > 0 { bytes.append(contentsOf: chunk[0..<count]) }
            if count < chunk.count { return ferror(file) == 0 ? bytes : nil }
        }
    }
}
