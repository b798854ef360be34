/// The broker `concierge top` watches: `HOST:PORT` as given to the broker's `--http`, or a URL
/// (`http://HOST:PORT`, an optional trailing `/`); an IPv6 host is written in brackets (`[::1]:9464`).
public struct TopTarget: Sendable, Equatable, CustomStringConvertible {
    public var host: String
    public var port: Int

    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    public init(parsing text: String) throws(TopTargetError) {
        var rest = Substring(text)
        if rest.lowercased().hasPrefix("http://") { rest = rest.dropFirst("http://".count) }
        if rest.lowercased().hasPrefix("https://") {
            throw TopTargetError(description: "https is not supported (the broker serves plain HTTP): \(text)")
        }
        while rest.hasSuffix("/") { rest = rest.dropLast() }
        guard !rest.contains("/"), let colon = rest.lastIndex(of: ":") else {
            throw TopTargetError(description: "expected HOST:PORT or http://HOST:PORT, got \"\(text)\"")
        }
        var host = rest[..<colon]
        if host.hasPrefix("[") && host.hasSuffix("]") { host = host.dropFirst().dropLast() }
        guard !host.isEmpty, let port = Int(rest[rest.index(after: colon)...]), (1...65535).contains(port) else {
            throw TopTargetError(description: "expected HOST:PORT with a port from 1 to 65535, got \"\(text)\"")
        }
        self.init(host: String(host), port: port)
    }

    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}

/// A `--http` value `concierge top` cannot use.
public struct TopTargetError: Error, Sendable, Equatable, CustomStringConvertible {
    public let description: String
}
