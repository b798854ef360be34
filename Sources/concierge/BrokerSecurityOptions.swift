import ArgumentParser
import IntentBroker
import IntentPermissions
import ZeroMQ

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

    @Option(
        help: ArgumentHelp(
            "Who may send and serve which intent types (Docs/PERMISSIONS.md; check it with `concierge permissions "
                + "check`). Needs CURVE. SIGHUP (`concierge permissions reload`) rereads it; a file that does not "
                + "parse keeps the permissions in force.",
            valueName: "file"
        )
    )
    var permissions: String?

    @Option(
        help: ArgumentHelp(
            "Write an audit log: one JSON line per request accepted, refused and ended (time, identity, key, intent "
                + "type, phase, outcome, request id, routing id; never a body), appended to this file, or `-` for "
                + "standard output. Docs/PERMISSIONS.md.",
            valueName: "file"
        )
    )
    var auditLog: String?

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
        if permissions != nil, given == 0 {
            throw ValidationError(
                "permissions-need-curve: --permissions needs CURVE (--curve-secret-key, --client-keys, --worker-keys): "
                    + "an identity is a client's or worker's key")
        }
    }

    /// Sets CURVE (read from the files), the permissions and the insecure-endpoint override on `configuration`.
    func apply(to configuration: inout BrokerConfiguration) throws {
        if let permissions { configuration.permissions = try Permissions.load(path: permissions) }
        configuration.allowInsecureEndpoints = insecure
        configuration.auditLog = auditLog
        if let curveSecretKey, let clientKeys, let workerKeys {
            configuration.curve = try BrokerCurveConfiguration(
                secretKeyFile: curveSecretKey, clientKeys: clientKeys, workerKeys: workerKeys
            )
        }
    }
}
