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
/// drains. New requests, on open connections or new ones, are answered 503 `shutting-down` with `Connection: close`
/// and `/readyz` answers 503, while open requests, long polls and event streams run to their ending for at most
/// ``GatewayConfiguration/drainTimeout``; those still open then are answered `shutting-down`, the server closes its
/// connections, and `run()` returns.
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
    let sweeper = DeadlineSweeper()
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
        router.add(
            middleware: ProblemMiddleware(metrics: metrics, draining: { [self] in draining.load(ordering: .relaxed) }))
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
        // Hummingbird's own lines at warning and above; its metadata per request is kept, not formatted.
        let handler = logger.handler
        var httpLogger = Logger(label: logger.label) { _ in QuietMetadataLogHandler(wrapping: handler) }
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
                // The documented form (Docs/GATEWAY.md): scripts find an ephemeral port in it.
                logger.info("gateway ready http=\(HTTPEndpoint(host: endpoint.host, port: port)) scheme=\(scheme)")
            }, logger: httpLogger)
        // The server runs in a service group of its own: the process's SIGTERM reaches this service only, which
        // drains first and then shuts the server down (Hummingbird would stop accepting at once).
        let serverGroup = ServiceGroup(
            configuration: .init(
                services: [.init(service: Self.Listener(application: application, endpoint: endpoint))],
                logger: httpLogger))
        defer { clients.closeAll() }
        try await withThrowingTaskGroup(of: Bool.self) { group in
            group.addTask {
                // Detached: a service group inherits its parent's graceful shutdown through a task local.
                let server = Task.detached { try await serverGroup.run() }
                try await withTaskCancellationHandler {
                    try await server.value
                } onCancel: {
                    server.cancel()
                }
                return true
            }
            group.addTask { [sweeper] in
                await sweeper.run()
                return false
            }
            group.addTask { [self] in
                guard (try? await gracefulShutdown()) != nil else { return false }
                await drain()
                await serverGroup.triggerGracefulShutdown()
                return false
            }
            // The group ends when the server does (its open connections closed).
            while let serverEnded = try await group.next() {
                if serverEnded {
                    group.cancelAll()
                    break
                }
            }
        }
    }

    /// Drains: new requests are refused from now on; open ones get up to the drain time to end, then every one
    /// still waiting is answered `shutting-down`.
    private func drain() async {
        draining.store(true, ordering: .relaxed)
        let drainTimeout = configuration.drainTimeout
        logger.info(
            "gateway draining",
            metadata: ["open": "\(table.open)", "drain_ms": "\(Int(drainTimeout / .milliseconds(1)))"])
        let end = ContinuousClock.now + drainTimeout
        while ContinuousClock.now < end && (table.open > 0 || openStreams.load(ordering: .relaxed) > 0) {
            try? await Task.sleep(for: .milliseconds(20))
        }
        table.shutDown()
    }

    /// The HTTP server as a service of the gateway's own service group.
    private struct Listener: Service {
        let application: Application<RouterResponder<BasicRequestContext>>
        let endpoint: HTTPEndpoint

        func run() async throws {
            do {
                try await application.run()
            } catch let error as IOError {
                let reason = String(cString: strerror(error.errnoCode)).lowercased()
                throw HTTPEndpointError(code: .bindFailed, message: "--listen \(endpoint): \(reason)")
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
        router.get("/metrics") { _, _ in self.metricsResponse() }
        // HEAD (RFC 9110 9.3.2) on the probes and /metrics: GET's status and headers, no content.
        router.head("/livez") { _, _ in Self.text(.ok, "ok").createHeadResponse() }
        router.head("/readyz") { _, _ in await self.readiness().createHeadResponse() }
        router.head("/metrics") { _, _ in self.metricsResponse().createHeadResponse() }
    }

    private func metricsResponse() -> Response {
        Response(
            status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: metricsText?() ?? [])))
    }

    /// 200 when a broker answers a ping within 1 s and the gateway is not draining; else 503 at once (no broker
    /// connection, draining) or after 1 s at most.
    private func readiness() async -> Response {
        if draining.load(ordering: .relaxed) { return Self.text(.serviceUnavailable, "draining") }
        guard let client = clients.any else { return Self.text(.serviceUnavailable, "no broker connection") }
        guard client.isConnected else { return Self.text(.serviceUnavailable, "no broker connection") }
        let answered = await Self.within(.seconds(1)) { (try? await client.ping()) != nil } ?? false
        return answered
            ? Self.text(.ok, "broker answers") : Self.text(.serviceUnavailable, "the broker does not answer a ping")
    }

    /// `operation`'s result, or nil once `limit` passed. The client's calls wait on continuations that cancelling
    /// does not end: the operation is left to finish on its own, unawaited, so that the caller's wait is bounded.
    static func within<T: Sendable>(
        _ limit: Duration, _ operation: @escaping @Sendable () async -> T
    ) async -> T? {
        let result = Mutex<(done: Bool, waiter: CheckedContinuation<T?, Never>?)>((false, nil))
        let finish: @Sendable (T?) -> Void = { value in
            let waiter = result.withLock { state -> CheckedContinuation<T?, Never>? in
                guard !state.done else { return nil }
                state.done = true
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume(returning: value)
        }
        return await withCheckedContinuation { continuation in
            result.withLock { $0.waiter = continuation }
            let timer = Task {
                try? await Task.sleep(for: limit)
                finish(nil)
            }
            Task {
                finish(await operation())
                timer.cancel()
            }
        }
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
