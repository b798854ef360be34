import ConciergeHTTP
import ConciergeJSON
import HTTPTypes
import Hummingbird
import HummingbirdCore
import IntentClient
import IntentPermissions
public import Logging
public import Metrics
import NIOCore
public import ServiceLifecycle
import Synchronization

#if TLS
    import HummingbirdTLS
    import NIOSSL
#endif

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The HTTP/JSON gateway (`concierge gateway`): Hummingbird routes onto ``IntentClient/ConciergeClient``, as
/// `Schemas/openapi.yaml` describes them (Docs/GATEWAY.md). A ServiceLifecycle `Service`: on graceful shutdown it
/// stops accepting connections, lets open requests and event streams run to their ending for
/// ``GatewayConfiguration/drainTimeout``, then answers those still open `shutting-down`, and returns.
public final class Gateway: Service, Sendable {
    let configuration: GatewayConfiguration
    let logger: Logger
    let clients: GatewayClients
    /// With ``GatewayConfiguration/permissions``: each identity's send list by name.
    let sendLists: [String: AccessList]?
    let table: RequestTable
    let metrics: GatewayMetrics
    let metricsText: (@Sendable () -> [UInt8])?
    let draining = Atomic<Bool>(false)
    let openStreams = Atomic<Int>(0)
    private let boundPort = Mutex<Int?>(nil)
    private let nextID = Atomic<UInt64>(1)
    /// Request ids are `g` + this process's random prefix + a counter: unique across gateways sharing a broker.
    private let idPrefix = String(UInt64.random(in: 0...UInt64.max), radix: 36)

    /// A gateway; `metricsFactory` gets its metrics, and `metricsText` answers `GET /metrics` (Prometheus' text).
    public init(
        configuration: GatewayConfiguration, logger: Logger, metricsFactory: (any MetricsFactory)? = nil,
        metricsText: (@Sendable () -> [UInt8])? = nil
    ) throws {
        self.configuration = configuration
        self.logger = logger
        self.clients = try GatewayClients(configuration: configuration, logger: logger)
        self.sendLists = configuration.permissions.map { permissions in
            Dictionary(permissions.identities.map { ($0.name, $0.send) }) { first, _ in first }
        }
        self.table = RequestTable(timeToLive: configuration.endingTimeToLive)
        self.metrics = GatewayMetrics(factory: metricsFactory)
        self.metricsText = metricsText
    }

    /// The port bound (an ephemeral one resolved), once the server runs.
    public var port: Int? { boundPort.withLock { $0 } }

    func makeRequestID() -> String {
        "g\(idPrefix)-\(nextID.wrappingAdd(1, ordering: .relaxed).oldValue)"
    }

    public func run() async throws {
        let router = Router()
        // Outermost first: cross-origin headers go on every answer, problems included.
        if let origin = configuration.corsOrigin { router.add(middleware: CORSHeaders(origin: origin)) }
        router.add(middleware: ProblemMiddleware(metrics: metrics))
        addRoutes(to: router)
        let server: HTTPServerBuilder
        if let tls = configuration.tls {
            #if TLS
                server = try .tls(.http1(), tlsConfiguration: Self.tlsConfiguration(tls))
            #else
                _ = tls
                throw TLSNotBuilt()
            #endif
        } else {
            server = .http1()
        }
        var httpLogger = logger
        httpLogger.logLevel = max(logger.logLevel, .warning)
        let logger = self.logger
        let endpoint = configuration.listen
        let scheme = configuration.tls == nil ? "http" : "https"
        let application = Application(
            router: router, server: server,
            configuration: .init(address: .hostname(endpoint.host, port: endpoint.port), backlog: 4096),
            onServerRunning: { [self] channel in
                let port = channel.localAddress?.port ?? endpoint.port
                self.boundPort.withLock { $0 = port }
                logger.info(
                    "gateway ready",
                    metadata: ["http": "\(HTTPEndpoint(host: endpoint.host, port: port))", "scheme": "\(scheme)"])
            }, logger: httpLogger)
        let drainTimeout = configuration.drainTimeout
        defer { clients.closeAll() }
        // The group ends when the server does (its open connections closed), never when the drain timer does.
        try await withThrowingTaskGroup(of: Bool.self) { group in
            group.addTask {
                do {
                    try await application.run()
                } catch let error as IOError {
                    let reason = String(cString: strerror(error.errnoCode)).lowercased()
                    throw HTTPEndpointError(code: .bindFailed, message: "--listen \(endpoint): \(reason)")
                }
                return true
            }
            group.addTask { [self] in
                // The server stops accepting on the same signal; open requests get the drain time for their ending.
                try await gracefulShutdown()
                draining.store(true, ordering: .relaxed)
                logger.info(
                    "gateway draining",
                    metadata: ["open": "\(table.open)", "drain_ms": "\(Int(drainTimeout / .milliseconds(1)))"])
                try await Task.sleep(for: drainTimeout)
                table.shutDown()
                return false
            }
            while let serverEnded = try await group.next() {
                if serverEnded {
                    group.cancelAll()
                    break
                }
            }
        }
    }

    #if TLS
        private static func tlsConfiguration(_ tls: GatewayTLS) throws -> TLSConfiguration {
            let chain = try NIOSSLCertificate.fromPEMFile(tls.certificateFile).map {
                NIOSSLCertificateSource.certificate($0)
            }
            let key = try NIOSSLPrivateKey(file: tls.privateKeyFile, format: .pem)
            var configuration = TLSConfiguration.makeServerConfiguration(
                certificateChain: chain, privateKey: .privateKey(key))
            if let clientCA = tls.clientCAFile {
                configuration.certificateVerification = .noHostnameVerification
                configuration.trustRoots = .file(clientCA)
            }
            return configuration
        }
    #endif

    /// The routes of Schemas/openapi.yaml.
    private func addRoutes(to router: Router<BasicRequestContext>) {
        router.post("/v1/requests") { request, context in try await self.submit(request, context: context) }
        router.get("/v1/requests/:id") { request, context in try await self.poll(request, context: context) }
        router.delete("/v1/requests/:id") { request, context in try await self.cancel(request, context: context) }
        router.post("/v1/conversations") { request, context in
            try await self.startConversation(request, context: context)
        }
        router.post("/v1/conversations/:id/turns") { request, context in
            try await self.answer(request, context: context)
        }
        router.get("/v1/conversations/:id") { request, context in
            try await self.readConversation(request, context: context, end: false)
        }
        router.delete("/v1/conversations/:id") { request, context in
            try await self.readConversation(request, context: context, end: true)
        }
        router.get("/livez") { _, _ in Self.text(.ok, "ok") }
        router.get("/readyz") { _, _ in await self.readiness() }
        router.get("/metrics") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: ResponseBody(byteBuffer: ByteBuffer(bytes: self.metricsText?() ?? [])))
        }
    }

    private func readiness() async -> Response {
        if draining.load(ordering: .relaxed) { return Self.text(.serviceUnavailable, "draining") }
        guard let client = clients.any else { return Self.text(.serviceUnavailable, "no broker connection") }
        let answered = await withTaskGroup(of: Bool.self) { group in
            group.addTask { (try? await client.ping()) != nil }
            group.addTask {
                try? await Task.sleep(for: .seconds(1))
                return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
        return answered
            ? Self.text(.ok, "broker answers") : Self.text(.serviceUnavailable, "the broker does not answer a ping")
    }

    static func text(_ status: HTTPResponse.Status, _ text: String) -> Response {
        Response(
            status: status, headers: [.contentType: "text/plain; charset=utf-8"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: text + "\n")))
    }

    /// The caller's identity and client, or 401.
    func authenticate(_ request: Request) throws(GatewayProblem) -> (GatewayIdentity, ConciergeClient) {
        guard let found = clients.identify(authorization: request.headers[.authorization]) else {
            throw GatewayProblem(
                code: "unauthorized",
                detail: request.headers[.authorization] == nil
                    ? "this gateway needs an Authorization: Bearer token" : "the bearer token is not known")
        }
        return found
    }
}
