import ArgumentParser
import ConciergeCommandLine
import ConciergeGateway
import ConciergeHTTP
import ConciergeTracing
import Foundation
import IntentClient
import IntentPermissions
import IntentWire
import Logging
import Prometheus
import ServiceLifecycle
import UnixSignals

/// `concierge gateway`: HTTP/JSON onto the broker (Docs/GATEWAY.md, Schemas/openapi.yaml).
struct GatewayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gateway",
        abstract: "Serve the broker over HTTP/JSON: requests with server-sent progress, long polls, conversations.",
        discussion: """
            Routes and statuses: Docs/GATEWAY.md; the contract: Schemas/openapi.yaml. Without TLS the gateway \
            listens on loopback only, unless --insecure-listen says otherwise. On SIGTERM it stops accepting \
            connections, gives open requests --drain-timeout-ms to end, answers the rest shutting-down, and exits.
            """)

    @OptionGroup var options: GatewayOptions
    @OptionGroup var curve: CurveClientOptions
    @OptionGroup var heartbeat: HeartbeatOption
    @OptionGroup var logging: LoggingOptions

    func run() async throws {
        _ = logging.bootstrap()
        let logger = Logger(label: "concierge.gateway")
        var configuration = try options.configuration()
        configuration.curve = try curve.keys()
        configuration.heartbeatInterval = .milliseconds(heartbeat.heartbeatMs)
        try configuration.listen.checkBindable()
        let metrics = MetricsRegistry()
        let registry = metrics.registry
        let exporter = try TracingBootstrap.bootstrap(
            TracingConfiguration(enabled: configuration.tracing, serviceName: "concierge-gateway"), logger: logger)
        let gateway = try Gateway(
            configuration: configuration, logger: logger, metricsFactory: metrics.factory,
            metricsText: { registry.emitToBuffer() })
        // On SIGTERM the gateway drains first; the span exporter stops last, so that it sends the last spans.
        var services: [ServiceGroupConfiguration.ServiceConfiguration] = exporter.map { [.init(service: $0)] } ?? []
        services.append(.init(service: gateway))
        let group = ServiceGroup(
            configuration: .init(services: services, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await group.run()
    }
}

/// The gateway's own options (shared with `up --gateway`).
struct GatewayOptions: ParsableArguments {
    @Option(help: "The broker's frontend endpoint, or several separated by commas (the active broker and standbys).")
    var broker: String = Defaults.client.brokerEndpoint

    @Option(help: ArgumentHelp("Listen on this address (port 0 picks one).", valueName: "host:port"))
    var listen: String = "127.0.0.1:8080"

    @Option(help: ArgumentHelp("TLS: the certificate chain (PEM); needs --tls-key.", valueName: "file"))
    var tlsCert: String?

    @Option(help: ArgumentHelp("TLS: the private key (PEM).", valueName: "file"))
    var tlsKey: String?

    @Option(
        help: ArgumentHelp(
            "TLS: require client certificates signed by these CAs (PEM).", valueName: "file"))
    var tlsClientCa: String?

    @Flag(help: "Allow a --listen address other hosts can reach without TLS (put TLS in front of it).")
    var insecureListen = false

    @Option(
        help: ArgumentHelp(
            "Bearer tokens: a file of lines `IDENTITY TOKEN` (identities of A-Z a-z 0-9 _ . -, tokens of 16 bytes or "
                + "more; # starts a comment). Each identity is a scope of its own at the broker: its keys, requests "
                + "and conversations are its own.",
            valueName: "file"))
    var tokens: String?

    @Option(
        help: ArgumentHelp(
            "A permissions file (Docs/PERMISSIONS.md): each token identity (by name; `anonymous` without --tokens) may "
                + "send only what its `send` list allows, else 403 forbidden. Check it with `concierge permissions "
                + "check`.",
            valueName: "file"))
    var permissions: String?

    @Option(help: ArgumentHelp("The largest request body in bytes (larger: 413).", valueName: "bytes"))
    var maxBody: Int = 1 << 20

    @Option(
        help: ArgumentHelp(
            "On SIGTERM, how long open requests and streams get to end before they are answered shutting-down.",
            valueName: "ms"))
    var drainTimeoutMs: Int = 10_000

    @Option(
        help: ArgumentHelp(
            "Answer cross-origin requests (browsers' fetch and EventSource) from this origin; * for any.",
            valueName: "origin"))
    var corsOrigin: String?

    @Flag(help: "Open a server span per request (OTLP export configured by the OTEL_* environment variables).")
    var tracing = false

    func validate() throws { _ = try configuration() }

    /// The configuration the options describe (without CURVE and heartbeat: those are the command's).
    func configuration() throws -> GatewayConfiguration {
        let endpoints = try BrokerEndpointList.parse(broker, checkSyntax: true)
        let endpoint: HTTPEndpoint
        do {
            endpoint = try HTTPEndpoint(parsing: listen)
        } catch {
            throw ValidationError("--listen: \(error.message)")
        }
        guard (tlsCert == nil) == (tlsKey == nil) else {
            throw ValidationError("TLS needs both --tls-cert and --tls-key")
        }
        if tlsClientCa != nil && tlsCert == nil {
            throw ValidationError("--tls-client-ca needs --tls-cert and --tls-key")
        }
        if tlsCert != nil && !GatewayTLS.isBuilt { throw ValidationError("--tls-cert: \(TLSNotBuilt())") }
        let tls = tlsCert.map {
            GatewayTLS(certificateFile: $0, privateKeyFile: tlsKey ?? "", clientCAFile: tlsClientCa)
        }
        guard endpoint.isLoopback || tls != nil || insecureListen else {
            throw ValidationError(
                "--listen \(listen) can be reached from other hosts: give --tls-cert and --tls-key, bind 127.0.0.1, or "
                    + "add --insecure-listen (insecure-endpoint)")
        }
        guard maxBody >= 1024 && maxBody <= 64 << 20 else {
            throw ValidationError("--max-body takes 1024 to 67108864 bytes")
        }
        guard drainTimeoutMs >= 0 else { throw ValidationError("--drain-timeout-ms takes 0 or more") }
        var configuration = GatewayConfiguration(
            brokerEndpoints: endpoints, listen: endpoint, tls: tls, tokens: try tokens.map(Self.readTokens),
            maxBodyBytes: maxBody, drainTimeout: .milliseconds(drainTimeoutMs), corsOrigin: corsOrigin,
            tracing: tracing)
        if let permissions {
            do {
                configuration.permissions = try Permissions.load(path: permissions)
            } catch {
                throw ValidationError("--permissions: \(error)")
            }
        }
        return configuration
    }

    /// Token → identity, from a file of `IDENTITY TOKEN` lines.
    static func readTokens(_ path: String) throws -> [String: String] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ValidationError("--tokens: cannot read \(path)")
        }
        var tokens: [String: String] = [:]
        for (number, line) in String(decoding: data, as: UTF8.self).split(separator: "\n").enumerated() {
            let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            if words.isEmpty || words[0].hasPrefix("#") { continue }
            guard words.count == 2, words[1].utf8.count >= 16 else {
                throw ValidationError(
                    "--tokens \(path), line \(number + 1): expected `IDENTITY TOKEN` (a token of 16 bytes or more)")
            }
            // Each identity is a scope of its own at the broker (PROTOCOL.md 3.4): a name as in a permissions file.
            guard ClientScope.isValidName(words[0].utf8) else {
                throw ValidationError(
                    "--tokens \(path), line \(number + 1): an IDENTITY is 1 to 64 characters of A-Z, a-z, 0-9, '_', "
                        + "'.' and '-'")
            }
            guard tokens[String(words[1])] == nil else {
                throw ValidationError("--tokens \(path), line \(number + 1): a token given twice")
            }
            tokens[String(words[1])] = String(words[0])
        }
        guard !tokens.isEmpty else { throw ValidationError("--tokens \(path) holds no token") }
        return tokens
    }
}
