public import ConciergeHTTP
import IntentClient
public import IntentPermissions
import IntentWire
public import ZeroMQ

/// How `concierge gateway` listens and which brokers it talks to (Docs/GATEWAY.md).
public struct GatewayConfiguration: Sendable {
    /// The broker endpoints, in failover order.
    public var brokerEndpoints: [String]
    /// Where the gateway listens (`127.0.0.1:8080`; port 0 picks one).
    public var listen: HTTPEndpoint
    /// TLS: the certificate chain and private key files (PEM); nil: plain HTTP (loopback only, unless
    /// ``insecureListen``).
    public var tls: GatewayTLS?
    /// Bearer tokens and the identity each one stands for; nil: no authentication (every caller is
    /// ``GatewayIdentity/anonymous``).
    public var tokens: [String: String]?
    /// The largest request body accepted (larger ones are answered 413 `body-too-large`).
    public var maxBodyBytes: Int
    /// On SIGTERM, how long open streams and long polls get to see their request's ending before they are answered
    /// `shutting-down`.
    public var drainTimeout: Duration
    /// How long the gateway remembers a request's ending for `GET /v1/requests/{id}` (the broker keeps it too, for
    /// its result time to live).
    public var endingTimeToLive: Duration
    /// Answer cross-origin requests from this origin (`*` for any): for browsers' `fetch` and `EventSource`.
    public var corsOrigin: String?
    /// CURVE keys for the broker connection (nil: none).
    public var curve: CurveClientKeys?
    /// The client heartbeat interval (must match the broker's).
    public var heartbeatInterval: Duration
    /// Open a server span `POST /v1/requests` per request (Docs/TRACING.md); off: trace headers are passed through.
    public var tracing: Bool
    /// The comment line sent on idle event streams, so that a vanished reader is noticed.
    public var keepAliveInterval: Duration
    /// The deadline of a request that gives none: the broker's default (`concierge broker --deadline-ms`). When no
    /// broker is connected, a request is answered 503 `unavailable` at its deadline (Docs/GATEWAY.md, "When the
    /// broker is away").
    public var defaultDeadline: Duration = .seconds(3)
    /// What each identity may send (`Docs/PERMISSIONS.md`): the identities of the tokens file (``anonymous``
    /// without one) by their names, each identity's `send` list. A request or conversation its identity may not send
    /// is answered 403 `forbidden` before it reaches the broker. nil: every identity may send everything the
    /// gateway's own broker key may.
    public var permissions: Permissions?

    /// Creates a configuration; defaults as `concierge gateway` documents them.
    public init(
        brokerEndpoints: [String],
        listen: HTTPEndpoint = HTTPEndpoint(host: "127.0.0.1", port: 8080),
        tls: GatewayTLS? = nil,
        tokens: [String: String]? = nil,
        maxBodyBytes: Int = 1 << 20,
        drainTimeout: Duration = .seconds(10),
        endingTimeToLive: Duration = .seconds(300),
        corsOrigin: String? = nil,
        curve: CurveClientKeys? = nil,
        heartbeatInterval: Duration = .seconds(1),
        tracing: Bool = false,
        keepAliveInterval: Duration = .seconds(15)
    ) {
        self.brokerEndpoints = brokerEndpoints
        self.listen = listen
        self.tls = tls
        self.tokens = tokens
        self.maxBodyBytes = maxBodyBytes
        self.drainTimeout = drainTimeout
        self.endingTimeToLive = endingTimeToLive
        self.corsOrigin = corsOrigin
        self.curve = curve
        self.heartbeatInterval = heartbeatInterval
        self.tracing = tracing
        self.keepAliveInterval = keepAliveInterval
    }

    /// The client configuration of one identity: its own routing id. With ``tokens``, the routing id
    /// `scope:NAME/gateway-RANDOM` puts the identity in a scope of its own within the gateway's key
    /// (`Schemas/PROTOCOL.md` section 3.4), so that the broker keeps its idempotency keys, requests (STATUS, CANCEL)
    /// and conversations apart from every other identity's, with CURVE (one key for all) or without. Without tokens,
    /// `gateway-anonymous-RANDOM`: the gateway's key's own scope.
    ///
    /// - Throws: ``InvalidGatewayIdentity`` when a token identity's name cannot name a scope.
    func clientConfiguration(for identity: GatewayIdentity) throws(InvalidGatewayIdentity) -> ClientConfiguration {
        let suffix = String(UInt64.random(in: 0...UInt64.max), radix: 16)
        let routingID: String
        if tokens == nil {
            routingID = "gateway-\(identity.name.prefix(64))-\(suffix)"
        } else {
            guard let scoped = ClientScope.routingID(scope: identity.name, rest: "gateway-\(suffix)") else {
                throw InvalidGatewayIdentity(name: identity.name)
            }
            routingID = scoped
        }
        return ClientConfiguration(
            brokerEndpoints: brokerEndpoints, routingID: routingID, heartbeatInterval: heartbeatInterval, curve: curve)
    }
}

/// A token identity's name that cannot name a scope at the broker (``GatewayConfiguration/tokens``): a name is 1
/// to 64 characters of `A-Z a-z 0-9 _ . -`, as in a permissions file. The gateway refuses to start with it.
public struct InvalidGatewayIdentity: Error, CustomStringConvertible {
    /// The stable code: `bad-identity-name`.
    public let code = "bad-identity-name"
    /// The name as given.
    public let name: String

    /// The error for identity `name`.
    public init(name: String) { self.name = name }

    public var description: String {
        "\(code): the identity name \"\(name)\" is not 1 to 64 characters of A-Z, a-z, 0-9, '_', '.' and '-'"
    }
}

/// The gateway's TLS files. Served only by a build with the package trait `TLS` (``isBuilt``); without it
/// ``Gateway/run()`` refuses them with ``TLSNotBuilt``.
public struct GatewayTLS: Sendable, Hashable {
    /// Whether this build can serve HTTPS (the package trait `TLS`, README "Build options").
    #if TLS
        public static let isBuilt = true
    #else
        public static let isBuilt = false
    #endif

    /// The certificate chain (PEM).
    public var certificateFile: String
    /// The private key (PEM).
    public var privateKeyFile: String
    /// When set, clients must present a certificate signed by one of these CAs (PEM).
    public var clientCAFile: String?

    /// Creates the TLS settings.
    public init(certificateFile: String, privateKeyFile: String, clientCAFile: String? = nil) {
        self.certificateFile = certificateFile
        self.privateKeyFile = privateKeyFile
        self.clientCAFile = clientCAFile
    }
}

/// HTTPS was asked for (`--tls-cert`) from a build without the package trait `TLS`: the gateway refuses to start
/// rather than serve plain HTTP where TLS was meant.
public struct TLSNotBuilt: Error, CustomStringConvertible {
    /// The stable code: `tls-not-built`.
    public let code = "tls-not-built"

    public init() {}

    public var description: String {
        "\(code): this build has no TLS; build it with the TLS trait (swift build --traits TLS, or "
            + "Scripts/build-release --traits Full; README, \"Build options\")"
    }
}
