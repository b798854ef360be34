public import ZeroMQ

extension BrokerCurveConfiguration {
    /// Reads the broker's secret key file and the two allowlists (each a file of public keys, one per line, or a
    /// directory of `*.pub` files; see ``CurveKeyFile``).
    public init(secretKeyFile: String, clientKeys: String, workerKeys: String) throws(CurveKeyError) {
        self.init(
            secretKey: try CurveKeyFile.readSecretKey(path: secretKeyFile),
            clientKeys: try CurveKeyFile.readAllowlist(path: clientKeys),
            workerKeys: try CurveKeyFile.readAllowlist(path: workerKeys)
        )
    }
}
