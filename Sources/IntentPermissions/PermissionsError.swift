/// Why a permissions file was refused, with a stable code and a message that says where (`Docs/PERMISSIONS.md`).
public struct PermissionsError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The stable codes.
    public enum Code: String, Sendable, Hashable {
        /// The file could not be read.
        case unreadable = "permissions-unreadable"
        /// The file is not JSON, or its JSON is not a permissions document (`Schemas/json/permissions.schema.json`).
        case malformed = "permissions-malformed"
        /// The same CURVE key is listed for two identities.
        case duplicateKey = "permissions-duplicate-key"
    }

    /// The stable code.
    public let code: Code
    /// What is wrong, naming the place in the file (a JSON path such as `identities.payments.keys[1]`).
    public let message: String

    /// An error with this code and message.
    public init(code: Code, message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code.rawValue): \(message)" }
}
