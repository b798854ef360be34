import IntentWire

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension BrokerConfiguration {
    /// Secure by default: without CURVE the broker binds only endpoints other hosts cannot reach — `ipc://`,
    /// `inproc://`, or TCP on a loopback address (`127.0.0.0/8`, `[::1]`, `localhost`) — unless
    /// ``allowInsecureEndpoints`` says otherwise. With ``curve`` set, any endpoint is allowed.
    ///
    /// Throws ``BrokerError/Code/badConfiguration`` for an endpoint that is not one at all (``EndpointSyntax``:
    /// `127.0.0.1:5555` without `tcp://`), then ``BrokerError/Code/insecureEndpoint`` naming the first endpoint
    /// refused.
    public func checkEndpointSecurity() throws(BrokerError) {
        for (role, endpoint) in [("frontend", frontendEndpoint), ("backend", backendEndpoint)] {
            do {
                try EndpointSyntax.check(endpoint)
            } catch {
                throw BrokerError(code: .badConfiguration, message: "\(role): \(error.message)")
            }
        }
        guard curve == nil, !allowInsecureEndpoints else { return }
        for (role, endpoint) in [("frontend", frontendEndpoint), ("backend", backendEndpoint)]
        where !Self.isLocalEndpoint(endpoint) {
            throw BrokerError(
                code: .insecureEndpoint,
                message: "\(role) \(endpoint) is not a loopback or ipc:// endpoint and CURVE is off: anyone who "
                    + "can reach it could submit requests or register as a worker and read them. Turn CURVE on "
                    + "(--curve-secret-key with --client-keys and --worker-keys), bind a loopback address or "
                    + "ipc://, or accept unauthenticated plain text explicitly (--insecure)"
            )
        }
    }

    /// Whether other hosts cannot reach `endpoint` when bound: `ipc://`, `inproc://`, or `tcp://` on a loopback
    /// address (`127.0.0.0/8`, `::1`, `::ffff:127.0.0.0/104`, `localhost`). Wildcards (`*`, `0.0.0.0`, `::`),
    /// interface names (`eth0`, even `lo`), other addresses and other transports are not.
    public static func isLocalEndpoint(_ endpoint: String) -> Bool {
        if endpoint.hasPrefix("ipc://") || endpoint.hasPrefix("inproc://") { return true }
        guard endpoint.hasPrefix("tcp://") else { return false }
        let address = endpoint.dropFirst("tcp://".count)
        guard let colon = address.lastIndex(of: ":") else { return false }
        var host = address[..<colon]
        if host.hasPrefix("[") && host.hasSuffix("]") { host = host.dropFirst().dropLast() }
        if host.lowercased() == "localhost" { return true }
        var ipv4 = in_addr()
        if inet_pton(AF_INET, String(host), &ipv4) == 1 {
            return withUnsafeBytes(of: &ipv4) { $0[0] == 127 }
        }
        var ipv6 = in6_addr()
        if inet_pton(AF_INET6, String(host), &ipv6) == 1 {
            return withUnsafeBytes(of: &ipv6) { bytes in
                let loopback = bytes.prefix(15).allSatisfy { $0 == 0 } && bytes[15] == 1
                let mappedLoopback =
                    bytes.prefix(10).allSatisfy { $0 == 0 } && bytes[10] == 0xFF && bytes[11] == 0xFF
                    && bytes[12] == 127
                return loopback || mappedLoopback
            }
        }
        return false
    }
}
