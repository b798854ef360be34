import Hummingbird
public import Logging
import NIOCore
public import Prometheus
public import ServiceLifecycle
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The HTTP endpoints operators and orchestrators read, as a ServiceLifecycle `Service` (Hummingbird):
/// - `GET /metrics`: the registry in Prometheus' text format;
/// - `GET /livez`: 200 when ``live`` says the process works, 503 otherwise (a restart may help);
/// - `GET /readyz`: 200 when ``ready`` says it should get work, 503 otherwise (send traffic elsewhere).
///
/// Both checks answer one line of text saying why. Off unless a command is given `--http`; see ``HTTPEndpoint`` for
/// which addresses are allowed.
public final class ObservabilityServer: Service, Sendable {
    public typealias Check = @Sendable () -> HealthStatus

    let endpoint: HTTPEndpoint
    let registry: PrometheusCollectorRegistry
    let live: Check
    let ready: Check
    let logger: Logger
    private let boundPort = Mutex<Int?>(nil)

    public init(
        endpoint: HTTPEndpoint, registry: PrometheusCollectorRegistry, logger: Logger, live: @escaping Check,
        ready: @escaping Check
    ) {
        self.endpoint = endpoint
        self.registry = registry
        self.logger = logger
        self.live = live
        self.ready = ready
    }

    /// The port bound (an ephemeral one resolved), once the server runs.
    public var port: Int? { boundPort.withLock { $0 } }

    public func run() async throws {
        let router = Router()
        let registry = self.registry
        let live = self.live
        let ready = self.ready
        router.get("/metrics") { _, _ -> Response in
            Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: ResponseBody(byteBuffer: ByteBuffer(bytes: registry.emitToBuffer())))
        }
        router.get("/livez") { _, _ in Self.answer(live()) }
        router.get("/readyz") { _, _ in Self.answer(ready()) }
        var httpLogger = logger
        httpLogger.logLevel = max(logger.logLevel, .warning)  // no line per scrape
        let logger = self.logger
        let endpoint = self.endpoint
        let application = Application(
            router: router, configuration: .init(address: .hostname(endpoint.host, port: endpoint.port)),
            onServerRunning: { [self] channel in
                let port = channel.localAddress?.port ?? endpoint.port
                self.boundPort.withLock { $0 = port }
                logger.info(
                    "http ready", metadata: ["http": "\(HTTPEndpoint(host: endpoint.host, port: port))"])
            }, logger: httpLogger)
        do {
            try await application.run()
        } catch let error as IOError {
            // Binding failed after ``HTTPEndpoint/checkBindable()`` passed (another process took the port): say
            // which address, not which system call.
            let reason = String(cString: strerror(error.errnoCode)).lowercased()
            throw HTTPEndpointError(code: .bindFailed, message: "--http \(endpoint): \(reason)")
        }
    }

    private static func answer(_ status: HealthStatus) -> Response {
        Response(
            status: status.isHealthy ? .ok : .serviceUnavailable, headers: [.contentType: "text/plain; charset=utf-8"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: status.detail + "\n")))
    }
}
