public import ConciergeHTTP
import HTTPTypes
import Hummingbird
import Logging
import NIOCore

/// The floor of the gateway's benchmark (`Scripts/bench-gateway`, Docs/PERFORMANCE.md): a minimal Hummingbird
/// server, built and configured as the gateway's (HTTP/1.1, the same backlog), with one route, `POST
/// /v1/requests`, that reads the JSON body and answers it back with 200. What a request costs here is Hummingbird's
/// and the kernel's share; the gateway's cost above it is its own.
public enum HTTPFloor {
    /// Serves until the task is cancelled; `ready` gets the bound port.
    public static func run(listen: HTTPEndpoint, ready: @escaping @Sendable (Int) -> Void) async throws {
        let router = Router()
        router.post("/v1/requests") { request, _ -> Response in
            let body = try await request.body.collect(upTo: 1 << 20)
            return Response(
                status: .ok, headers: [.contentType: "application/json"], body: ResponseBody(byteBuffer: body))
        }
        // The gateway's logger setup (warning and above, metadata not formatted per request).
        var logger = Logger(label: "concierge.http-floor") { label in
            QuietMetadataLogHandler(wrapping: StreamLogHandler.standardError(label: label))
        }
        logger.logLevel = .warning
        let application = Application(
            router: router, server: .http1(),
            configuration: .init(address: .hostname(listen.host, port: listen.port), backlog: 4096),
            onServerRunning: { channel in ready(channel.localAddress?.port ?? listen.port) }, logger: logger)
        try await application.run()  // until SIGTERM ends the process
    }
}
