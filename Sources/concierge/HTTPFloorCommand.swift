import ArgumentParser
import ConciergeGateway
import ConciergeHTTP

/// `concierge http-floor` (hidden): the benchmark floor of `Scripts/bench-gateway`, a minimal Hummingbird route in
/// this binary (``ConciergeGateway/HTTPFloor``).
struct HTTPFloorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "http-floor",
        abstract:
            "Serve a minimal Hummingbird route (POST /v1/requests answers its body): the gateway benchmark's floor.",
        shouldDisplay: false)

    @Option(help: ArgumentHelp("Listen on this address (port 0 picks one).", valueName: "host:port"))
    var listen: String = "127.0.0.1:0"

    func run() async throws {
        let endpoint: HTTPEndpoint
        do {
            endpoint = try HTTPEndpoint(parsing: listen)
        } catch {
            throw ValidationError("--listen: \(error.message)")
        }
        try await HTTPFloor.run(listen: endpoint) { port in
            print("http-floor ready http=\(endpoint.host):\(port)")
        }
    }
}
