import ConciergeTestKit
import Testing

extension Cluster {
    /// The port of the broker's `--http 127.0.0.1:0`, from its log line `http ready … http=127.0.0.1:PORT`.
    func brokerHTTPPort() async throws -> Int {
        try await waitForBrokerLog("http ready")
        let line = try #require(log("broker").split(separator: "\n").first { $0.contains("http ready") })
        let field = try #require(line.split(separator: " ").first { $0.hasPrefix("http=") })
        return try #require(Int(field.split(separator: ":").last ?? ""))
    }
}
