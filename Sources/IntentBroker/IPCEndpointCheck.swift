#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Guards `ipc://` binds: libzmq replaces an existing socket file without complaint, so a second broker started on
/// the same path would silently take the first one's new clients or workers. A path that something still listens on
/// is refused; a stale file (nobody listening) is left for libzmq to replace.
enum IPCEndpointCheck {
    /// Whether `endpoint` is an `ipc://` path that a live process is listening on.
    static func isInUse(_ endpoint: String) -> Bool {
        guard endpoint.hasPrefix("ipc://") else { return false }
        let path = String(endpoint.dropFirst("ipc://".count))
        guard !path.isEmpty, !path.hasPrefix("@"), path != "*" else { return false }  // abstract or ephemeral
        var status = stat()
        guard stat(path, &status) == 0, (status.st_mode & S_IFMT) == S_IFSOCK else { return false }
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        let bytes = Array(path.utf8)
        guard bytes.count < capacity else { return false }
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            buffer.copyBytes(from: bytes)
            buffer[bytes.count] = 0
        }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        return result == 0
    }
}
