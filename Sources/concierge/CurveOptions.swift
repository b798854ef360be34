import ArgumentParser
import Foundation
import IntentBroker
import ZeroMQ

/// CURVE options of a client or worker (`worker`, `pool`, `send`, `load`): the broker's public key and this
/// process's own secret key, both files (see `concierge keygen`). Give both, or neither (no CURVE).
struct CurveClientOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "CURVE: the broker's public key file (e.g. broker.pub). Turns CURVE on; needs --curve-secret-key.",
            valueName: "file"
        )
    )
    var curveServerKey: String?

    @Option(
        help: ArgumentHelp(
            "CURVE: this process's own secret key file (its public key must be on the broker's allowlist).",
            valueName: "file"
        )
    )
    var curveSecretKey: String?

    func validate() throws {
        guard (curveServerKey == nil) == (curveSecretKey == nil) else {
            throw ValidationError("CURVE needs both --curve-server-key (the broker's .pub) and --curve-secret-key")
        }
        if let curveServerKey, curveServerKey.hasSuffix(".secret") {
            throw ValidationError(
                "--curve-server-key takes the broker's public key (.pub), never its secret key (\(curveServerKey))"
            )
        }
    }

    /// The keys, read from the files; nil without CURVE. Throws ``CurveKeyError`` for a bad file.
    func keys() throws(CurveKeyError) -> CurveClientKeys? {
        try Self.keys(serverKey: curveServerKey, secretKey: curveSecretKey)
    }

    /// The same options for a worker process a pool starts.
    var workerArguments: [String] {
        Self.workerArguments(serverKey: curveServerKey, secretKey: curveSecretKey)
    }

    static func keys(serverKey: String?, secretKey: String?) throws(CurveKeyError) -> CurveClientKeys? {
        guard let serverKey, let secretKey else { return nil }
        return try CurveClientKeys(serverKeyFile: serverKey, secretKeyFile: secretKey)
    }

    /// `--curve-server-key` and `--curve-secret-key` for a worker process (absolute paths, whatever directory the
    /// worker runs in); none without CURVE.
    static func workerArguments(serverKey: String?, secretKey: String?) -> [String] {
        guard let serverKey, let secretKey else { return [] }
        return ["--curve-server-key", absolutePath(serverKey), "--curve-secret-key", absolutePath(secretKey)]
    }
}

/// CURVE and endpoint-security options of the broker (`broker`, `up`).
struct BrokerSecurityOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "CURVE: the broker's secret key file (e.g. broker.secret). Turns CURVE on; needs --client-keys and "
                + "--worker-keys.",
            valueName: "file"
        )
    )
    var curveSecretKey: String?

    @Option(
        help: ArgumentHelp(
            "CURVE: public keys of the clients admitted on the frontend: a file with one Z85 key per line, or a "
                + "directory of *.pub files.",
            valueName: "path"
        )
    )
    var clientKeys: String?

    @Option(
        help: ArgumentHelp(
            "CURVE: public keys of the workers admitted on the backend (a file or a directory, as --client-keys).",
            valueName: "path"
        )
    )
    var workerKeys: String?

    @Flag(
        help: """
            Without CURVE, bind endpoints other hosts can reach (e.g. tcp://*:5555): plain text, and anyone who can \
            connect may submit requests or register as a worker. Refused without this flag.
            """
    )
    var insecure = false

    func validate() throws {
        let given = [curveSecretKey, clientKeys, workerKeys].filter { $0 != nil }.count
        guard given == 0 || given == 3 else {
            throw ValidationError("CURVE needs all of --curve-secret-key, --client-keys and --worker-keys")
        }
    }

    /// Sets CURVE (read from the files) and the insecure-endpoint override on `configuration`.
    func apply(to configuration: inout BrokerConfiguration) throws(CurveKeyError) {
        configuration.allowInsecureEndpoints = insecure
        if let curveSecretKey, let clientKeys, let workerKeys {
            configuration.curve = try BrokerCurveConfiguration(
                secretKeyFile: curveSecretKey, clientKeys: clientKeys, workerKeys: workerKeys
            )
        }
    }
}

/// `path` made absolute against the current directory.
func absolutePath(_ path: String) -> String {
    path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
}
