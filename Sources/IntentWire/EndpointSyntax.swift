/// The syntax of a ZeroMQ endpoint that a Concierge process binds or connects to: `tcp://HOST:PORT`,
/// `ipc://PATH` or `inproc://NAME`.
///
/// libzmq refuses a malformed endpoint with `EINVAL` at every connect, so a worker or client given one would retry
/// forever; commands check their endpoints with this first and report a usage error (exit 64) at start instead.
public enum EndpointSyntax {
    /// What is wrong with an endpoint.
    public struct Failure: Error, Sendable, Hashable, CustomStringConvertible {
        /// The endpoint as given.
        public let endpoint: String
        /// What is wrong, with what a valid endpoint looks like.
        public let message: String

        public var description: String { message }
    }

    /// Checks `endpoint`. `binding`: it is bound rather than connected to, so a `*` host (every interface) and a `*`
    /// port (an ephemeral one) are allowed.
    public static func check(_ endpoint: String, binding: Bool = false) throws(Failure) {
        func failure(_ what: String) -> Failure {
            Failure(
                endpoint: endpoint,
                message:
                    "malformed endpoint `\(endpoint)`: \(what) (expected tcp://HOST:PORT, ipc://PATH or inproc://NAME, "
                    + "e.g. tcp://127.0.0.1:5556)")
        }
        let parts = endpoint.split(separator: "://", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2 else {
            throw failure("no transport (tcp://, ipc:// or inproc://)")
        }
        let transport = parts[0]
        let address = parts[1]
        guard !address.contains(where: { $0 == " " || $0 == "\t" || $0 == "\n" }) else {
            throw failure("it contains white space")
        }
        switch transport {
        case "tcp":
            guard let colon = address.lastIndex(of: ":") else { throw failure("no port after the host") }
            let host = address[..<colon]
            let port = address[address.index(after: colon)...]
            guard !host.isEmpty else { throw failure("no host before the port") }
            if host == "*" && !binding { throw failure("`*` (every interface) can only be bound, not connected to") }
            if port == "*" || port == "0" {
                guard binding else { throw failure("an ephemeral port can only be bound, not connected to") }
            } else {
                guard let number = Int(port), (1...65_535).contains(number), port.allSatisfy({ $0.isASCII }) else {
                    throw failure("the port `\(port)` is not a number from 1 to 65535")
                }
            }
        case "ipc", "inproc":
            guard !address.isEmpty else { throw failure("no \(transport == "ipc" ? "path" : "name")") }
        default:
            throw failure("unknown transport `\(transport)`")
        }
    }
}
