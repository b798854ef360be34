public import ArgumentParser
public import ZeroMQ

#if canImport(Glibc)
    import Glibc
#endif

/// CURVE options of a client or worker (`worker`, `pool`, `send`, `load`): the broker's public key and this
/// process's own secret key, both files (see `concierge keygen`). Give both, or neither (no CURVE).
public struct CurveClientOptions: ParsableArguments, Sendable {
    public init() {}

    @Option(
        help: ArgumentHelp(
            "CURVE: the broker's public key file (e.g. broker.pub). Turns CURVE on; needs --curve-secret-key.",
            valueName: "file"
        )
    )
    public var curveServerKey: String?

    @Option(
        help: ArgumentHelp(
            "CURVE: this process's own secret key file (its public key must be on the broker's allowlist).",
            valueName: "file"
        )
    )
    public var curveSecretKey: String?

    public func validate() throws {
        try Self.checkPair(serverKey: curveServerKey, secretKey: curveSecretKey)
    }

    /// Both keys or neither, and the server key not a secret key file.
    public static func checkPair(serverKey: String?, secretKey: String?) throws {
        guard (serverKey == nil) == (secretKey == nil) else {
            throw ValidationError("CURVE needs both --curve-server-key (the broker's .pub) and --curve-secret-key")
        }
        if let serverKey, serverKey.hasSuffix(".secret") {
            throw ValidationError(
                "--curve-server-key takes the broker's public key (.pub), never its secret key (\(serverKey))")
        }
    }

    /// The keys, read from the files; nil without CURVE. Throws ``CurveKeyError`` for a bad file.
    public func keys() throws(CurveKeyError) -> CurveClientKeys? {
        try Self.keys(serverKey: curveServerKey, secretKey: curveSecretKey)
    }

    /// The same options for a worker process a pool starts.
    public var workerArguments: [String] {
        Self.workerArguments(serverKey: curveServerKey, secretKey: curveSecretKey)
    }

    public static func keys(serverKey: String?, secretKey: String?) throws(CurveKeyError) -> CurveClientKeys? {
        guard let serverKey, let secretKey else { return nil }
        return try CurveClientKeys(serverKeyFile: serverKey, secretKeyFile: secretKey)
    }

    /// The same keys as environment variables for any worker a pool starts (``WorkerProcessOptions/Environment``:
    /// absolute paths); none without CURVE.
    public var workerEnvironment: [String: String] {
        guard let curveServerKey, let curveSecretKey else { return [:] }
        return [
            WorkerProcessOptions.Environment.curveServerKey: absolutePath(curveServerKey),
            WorkerProcessOptions.Environment.curveSecretKey: absolutePath(curveSecretKey),
        ]
    }

    /// `--curve-server-key` and `--curve-secret-key` for a worker process (absolute paths, whatever directory the
    /// worker runs in); none without CURVE.
    public static func workerArguments(serverKey: String?, secretKey: String?) -> [String] {
        guard let serverKey, let secretKey else { return [] }
        return ["--curve-server-key", absolutePath(serverKey), "--curve-secret-key", absolutePath(secretKey)]
    }
}

/// `path` made absolute against the current directory.
func absolutePath(_ path: String) -> String {
    if path.hasPrefix("/") { return path }
    guard let directory = getcwd(nil, 0) else { return path }
    defer { free(directory) }
    return String(cString: directory) + "/" + path
}
