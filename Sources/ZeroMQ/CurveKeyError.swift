/// Why a CURVE key, key file or allowlist could not be made, read or written.
///
/// The ``code`` is stable (scripts and tests match on it); the ``message`` names the file and line and says
/// what was wrong.
public struct CurveKeyError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A stable, extensible error code.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Value: String {
            case malformedKey = "malformed-key"
            case unreadable = "unreadable-key-file"
            case noKey = "no-key"
            case tooManyKeys = "too-many-keys"
            case fileExists = "key-file-exists"
            case writeFailed = "key-file-write-failed"
            case curveUnavailable = "curve-unavailable"
        }
        private let value: Value

        /// Text that is not a CURVE key: not 40 Z85 characters (or 32 bytes), or not valid Z85.
        public static let malformedKey = Code(value: .malformedKey)
        /// A key file or allowlist could not be opened or read (missing, a permission problem, too large).
        public static let unreadable = Code(value: .unreadable)
        /// A key file or allowlist holds no key.
        public static let noKey = Code(value: .noKey)
        /// A public or secret key file holds more than one key.
        public static let tooManyKeys = Code(value: .tooManyKeys)
        /// A key file to be written exists already (and overwriting was not asked for).
        public static let fileExists = Code(value: .fileExists)
        /// A key file could not be written.
        public static let writeFailed = Code(value: .writeFailed)
        /// libzmq was built without CURVE (libsodium or tweetnacl).
        public static let curveUnavailable = Code(value: .curveUnavailable)

        public var description: String { value.rawValue }
    }

    /// What went wrong, stable.
    public let code: Code
    /// A human-readable explanation naming the file (and line) involved.
    public let message: String

    public init(code: Code, message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code): \(message)" }
}
