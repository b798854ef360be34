#if canImport(Glibc)
    import Glibc
#endif

/// The few file calls transcripts need, over Glibc (the broker links no Foundation). Every failure is a
/// ``TranscriptError`` `io` naming the path and `errno`'s text.
enum _File {
    static func failure(_ what: String, _ path: String, errno code: Int32 = errno) -> TranscriptError {
        TranscriptError(code: .io, message: "cannot \(what): \(String(cString: strerror(code)))", path: path)
    }

    /// The whole file at `path`.
    static func read(_ path: String) throws(TranscriptError) -> [UInt8] {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw failure("open the file", path) }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw failure("read the file", path)
            }
            if count == 0 { return bytes }
            bytes.append(contentsOf: chunk[0..<count])
        }
    }

    /// Creates `path` and the directories above it that are missing (`mkdir -p`).
    static func makeDirectories(_ path: String) throws(TranscriptError) {
        var prefix = path.hasPrefix("/") ? "/" : ""
        for part in path.split(separator: "/") {
            prefix += part
            if mkdir(prefix, 0o755) != 0 && errno != EEXIST { throw failure("create the directory", prefix) }
            prefix += "/"
        }
        var status = stat()
        guard stat(path, &status) == 0, status.st_mode & S_IFMT == S_IFDIR else {
            throw TranscriptError(code: .io, message: "cannot create the directory: not a directory", path: path)
        }
    }

    /// Writes all of `bytes` to `descriptor` (retrying short writes and EINTR).
    static func write(_ bytes: [UInt8], to descriptor: Int32, path: String) throws(TranscriptError) {
        var offset = 0
        while offset < bytes.count {
            let count = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress! + offset, $0.count - offset) }
            if count < 0 {
                if errno == EINTR { continue }
                throw failure("write the file", path)
            }
            offset += count
        }
    }
}
