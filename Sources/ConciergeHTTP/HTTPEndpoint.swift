/// Where an observability server listens: `HOST:PORT` (`127.0.0.1:9464`, `[::1]:9464`, `localhost:0` for an
/// ephemeral port).
///
/// Like the ZeroMQ endpoints, it is secure by default: ``isLoopback`` says whether only this host can reach it, and
/// the commands refuse other addresses unless told `--insecure` (the endpoints have no authentication).
public struct HTTPEndpoint: Sendable, Equatable, CustomStringConvertible {
    public var host: String
    public var port: Int

    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// Parses `HOST:PORT`; an IPv6 host is written in brackets.
    public init(parsing text: String) throws(HTTPEndpointError) {
        guard let colon = text.lastIndex(of: ":") else {
            throw HTTPEndpointError(code: .malformed, message: "expected HOST:PORT, got \"\(text)\"")
        }
        var host = String(text[..<colon])
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty, let port = Int(text[text.index(after: colon)...]), (0...65535).contains(port) else {
            throw HTTPEndpointError(
                code: .malformed, message: "expected HOST:PORT with a port from 0 to 65535, got \"\(text)\"")
        }
        self.init(host: host, port: port)
    }

    /// Whether only this host can connect: 127.0.0.0/8, ::1 or `localhost`.
    public var isLoopback: Bool {
        host == "localhost" || host == "::1" || host.hasPrefix("127.")
    }

    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}
