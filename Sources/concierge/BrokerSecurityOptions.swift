import ArgumentParser
import IntentBroker
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
