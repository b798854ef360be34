import IntentClient
import Logging

/// The identities the gateway knows and the broker connection of each (one ``ConciergeClient`` per identity, with
/// its own routing id; with tokens, each identity is a scope of its own at the broker,
/// ``GatewayConfiguration/clientConfiguration(for:)``).
final class GatewayClients: Sendable {
    /// Token → identity; nil: no authentication.
    private let tokens: [(token: [UInt8], identity: GatewayIdentity)]?
    private let clients: [GatewayIdentity: ConciergeClient]

    init(configuration: GatewayConfiguration, logger: Logger) throws {
        var clients: [GatewayIdentity: ConciergeClient] = [:]
        if let tokens = configuration.tokens {
            self.tokens = tokens.map { (Array($0.key.utf8), GatewayIdentity(name: $0.value)) }
            for name in Set(tokens.values) {
                let identity = GatewayIdentity(name: name)
                clients[identity] = try ConciergeClient(
                    configuration: configuration.clientConfiguration(for: identity), logger: logger)
            }
        } else {
            self.tokens = nil
            clients[.anonymous] = try ConciergeClient(
                configuration: configuration.clientConfiguration(for: .anonymous), logger: logger)
        }
        self.clients = clients
    }

    /// Whether callers must present a bearer token.
    var requiresToken: Bool { tokens != nil }

    /// Any one client (for readiness).
    var any: ConciergeClient? { clients.values.first }

    /// The identity of an `Authorization` header value and its client; nil when the token is missing or unknown.
    func identify(authorization: String?) -> (GatewayIdentity, ConciergeClient)? {
        guard let tokens else { return clients[.anonymous].map { (.anonymous, $0) } }
        guard let authorization, authorization.utf8.count > 7,
            authorization.prefix(7).lowercased() == "bearer "
        else { return nil }
        let presented = Array(authorization.utf8.dropFirst(7))
        // Every token is compared, in time that does not depend on where they differ.
        var found: GatewayIdentity?
        for entry in tokens where Self.constantTimeEqual(entry.token, presented) { found = entry.identity }
        guard let found, let client = clients[found] else { return nil }
        return (found, client)
    }

    func closeAll() {
        for client in clients.values { client.close() }
    }

    private static func constantTimeEqual(_ left: [UInt8], _ right: [UInt8]) -> Bool {
        var difference = UInt8(truncatingIfNeeded: left.count ^ right.count)
        for index in 0..<max(left.count, right.count) {
            let a = index < left.count ? left[index] : 0
            let b = index < right.count ? right[index] : 0
            difference |= a ^ b
        }
        return difference == 0
    }
}
