#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension HTTPEndpoint {
    /// Checks that this address can be bound now (its host resolves to a local address and its port is free), by
    /// binding a TCP socket to it and closing it again.
    ///
    /// A command calls it before it starts anything, so that a port in use ends it at once with a message naming
    /// the address rather than after its other services started. The server still reports a bind that fails
    /// later (another process took the port in between).
    ///
    /// Throws ``HTTPEndpointError/Code/bindFailed`` with the system's reason, e.g.
    /// `127.0.0.1:9090: address already in use`.
    public func checkBindable() throws(HTTPEndpointError) {
        var hints = addrinfo()
        hints.ai_flags = AI_PASSIVE
        hints.ai_family = AF_UNSPEC
        #if canImport(Glibc)
            hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #else
            hints.ai_socktype = SOCK_STREAM
        #endif
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let first = list else {
            throw HTTPEndpointError(
                code: .bindFailed, message: "\(self): cannot resolve \(host): \(String(cString: gai_strerror(status)))")
        }
        defer { freeaddrinfo(first) }
        // Bind the first address, as the server does.
        let descriptor = socket(first.pointee.ai_family, first.pointee.ai_socktype, first.pointee.ai_protocol)
        guard descriptor >= 0 else { throw Self.failure(self, errno) }
        defer { close(descriptor) }
        var one: Int32 = 1
        _ = setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        guard bind(descriptor, first.pointee.ai_addr, first.pointee.ai_addrlen) == 0 else {
            throw Self.failure(self, errno)
        }
    }

    private static func failure(_ endpoint: HTTPEndpoint, _ number: Int32) -> HTTPEndpointError {
        let reason = String(cString: strerror(number)).lowercased()
        return HTTPEndpointError(code: .bindFailed, message: "\(endpoint): \(reason)")
    }
}
