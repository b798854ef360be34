/// The shape of a ZeroMQ endpoint a command is given (`--frontend`, `--backend`, a worker's `--broker`), checked
/// before anything binds or connects, so that `127.0.0.1:7655` (no transport) is reported as malformed rather than
/// as something else further on (libzmq's `EINVAL`, or an insecure-endpoint refusal).
///
/// Valid endpoints:
/// - `tcp://HOST:PORT`: HOST an address, a name, an interface or `*` (IPv6 in brackets: `tcp://[::1]:5555`); PORT
///   0 to 65535 or `*` (an ephemeral port when binding). A connect may name a source first:
///   `tcp://SOURCE;HOST:PORT`.
/// - `ipc://PATH`: a non-empty path (`ipc://@name` for Linux's abstract namespace).
/// - `inproc://NAME`: a non-empty name.
///
/// It checks the syntax only: whether HOST resolves or PATH's folder exists is left to libzmq.
public enum EndpointSyntax {
    /// What a valid endpoint looks like, for messages.
    public static let expected = "tcp://HOST:PORT, ipc://PATH or inproc://NAME"

    /// Throws ``EndpointSyntaxError`` when `endpoint` is not `tcp://HOST:PORT`, `ipc://PATH` or `inproc://NAME`.
    /// `connecting`: the endpoint is connected to (a worker's or client's `--broker`), so a `*` host or port and
    /// port 0, which only a bind can take, are refused too (libzmq would refuse every connect, forever).
    public static func check(_ endpoint: String, connecting: Bool = false) throws(EndpointSyntaxError) {
        func malformed(_ why: String) -> EndpointSyntaxError {
            EndpointSyntaxError(
                endpoint: endpoint,
                message: "\"\(endpoint)\" is not a valid endpoint (\(why)); expected \(expected), "
                    + "e.g. tcp://127.0.0.1:5555")
        }
        let parts = endpoint.split(separator: "://", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2 else { throw malformed("no transport") }
        let (transport, address) = (parts[0], parts[1])
        switch transport {
        case "ipc", "inproc":
            guard !address.isEmpty else { throw malformed("an empty \(transport) name") }
        case "tcp":
            let peer = address.split(separator: ";", omittingEmptySubsequences: false).last ?? address
            guard let colon = peer.lastIndex(of: ":") else { throw malformed("no port") }
            let host = peer[..<colon]
            let port = peer[peer.index(after: colon)...]
            guard !host.isEmpty, host != "[]" else { throw malformed("no host") }
            if host.contains(":") {
                guard host.hasPrefix("[") && host.hasSuffix("]") else {
                    throw malformed("an IPv6 host must be in brackets")
                }
            }
            guard port == "*" || (port.allSatisfy { $0.isASCII } && Int(port).map { (0...65535).contains($0) } == true)
            else {
                throw malformed("the port must be 0 to 65535 or *")
            }
            if connecting, host == "*" || port == "*" || port == "0" {
                throw malformed("`*` and port 0 can only be bound, not connected to")
            }
        default:
            throw malformed("unsupported transport \"\(transport)\"")
        }
    }
}
