#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Concierge's CURVE key files and allowlists: plain text, one Z85 key per line.
///
/// - A **public key file** (`NAME.pub`, mode 0644) holds one public key; a **secret key file** (`NAME.secret`,
///   mode 0600) holds one secret key. `concierge keygen --out NAME` writes both.
/// - An **allowlist** is either a file with any number of public keys, one per line, or a directory, whose
///   `*.pub` files (one public key each) are read; other files in it are ignored.
///
/// Every line is read the same way: blank lines and lines starting with `#` are skipped (no CURVE key begins
/// with `#`: it is the largest Z85 digit, too large to start a 32-bit group); otherwise the line's first word
/// must be a 40-character Z85 key, and anything after it on the line is ignored (e.g. `# alice's laptop`).
/// Anything else is an error (``CurveKeyError/Code/malformedKey``, naming the file and line).
///
/// Files are read and written with plain POSIX calls (no Foundation), so that slim worker processes can use them.
public enum CurveKeyFile {
    /// The largest key file or allowlist read (a guard against reading the wrong file).
    public static let maxFileSize = 4 << 20

    // MARK: Reading

    /// Reads a public key file (exactly one key).
    public static func readPublicKey(path: String) throws(CurveKeyError) -> CurvePublicKey {
        try CurvePublicKey(bytes: readSingleKey(path: path, kind: "public key"))
    }

    /// Reads a secret key file (exactly one key).
    public static func readSecretKey(path: String) throws(CurveKeyError) -> CurveSecretKey {
        try CurveSecretKey(bytes: readSingleKey(path: path, kind: "secret key"))
    }

    /// Reads an allowlist: a file of public keys (one per line) or a directory of `*.pub` files. An allowlist
    /// without any key is an error (``CurveKeyError/Code/noKey``): it would admit nobody.
    public static func readAllowlist(path: String) throws(CurveKeyError) -> Set<CurvePublicKey> {
        var keys: Set<CurvePublicKey> = []
        if isDirectory(path) {
            for name in try publicKeyFiles(in: path) {
                keys.insert(try readPublicKey(path: join(path, name)))
            }
        } else {
            for key in try parseKeys(readText(path: path), source: path) {
                keys.insert(try CurvePublicKey(bytes: key))
            }
        }
        guard !keys.isEmpty else {
            throw CurveKeyError(
                code: .noKey,
                message: "\(path): the allowlist holds no public key (a file with one Z85 key per line, or a "
                    + "directory of *.pub files)"
            )
        }
        return keys
    }

    /// The keys in `text`, read line by line as described in ``CurveKeyFile``; `source` names the text in errors.
    public static func parseKeys(_ text: String, source: String) throws(CurveKeyError) -> [[UInt8]] {
        var keys: [[UInt8]] = []
        var lineNumber = 0
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            lineNumber += 1
            let word = line.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\r" }).first
            guard let word, !word.hasPrefix("#") else { continue }
            do throws(CurveKeyError) {
                keys.append(try _decodeCurveKey(String(word)))
            } catch {
                throw CurveKeyError(code: .malformedKey, message: "\(source):\(lineNumber): \(error.message)")
            }
        }
        return keys
    }

    static func readSingleKey(path: String, kind: String) throws(CurveKeyError) -> [UInt8] {
        let keys = try parseKeys(readText(path: path), source: path)
        guard let key = keys.first else {
            throw CurveKeyError(code: .noKey, message: "\(path): no \(kind) in the file (expected one Z85 key)")
        }
        guard keys.count == 1 else {
            throw CurveKeyError(
                code: .tooManyKeys,
                message: "\(path): \(keys.count) keys in a \(kind) file (expected exactly one)"
            )
        }
        return key
    }

    /// The whole file as text.
    static func readText(path: String) throws(CurveKeyError) -> String {
        func failure(_ reason: String) -> CurveKeyError {
            CurveKeyError(code: .unreadable, message: "\(path): \(reason)")
        }
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw failure(systemError()) }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw failure(systemError())
            }
            if count == 0 { break }
            bytes += chunk[..<count]
            guard bytes.count <= maxFileSize else {
                throw failure("larger than \(maxFileSize) bytes; not a key file")
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    static func isDirectory(_ path: String) -> Bool {
        var status = stat()
        return stat(path, &status) == 0 && (status.st_mode & S_IFMT) == S_IFDIR
    }

    /// The names of the `*.pub` files in a directory, sorted.
    static func publicKeyFiles(in path: String) throws(CurveKeyError) -> [String] {
        guard let directory = opendir(path) else {
            throw CurveKeyError(code: .unreadable, message: "\(path): \(systemError())")
        }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(cString: raw.bindMemory(to: CChar.self).baseAddress!)
            }
            if name.hasSuffix(".pub"), !name.hasPrefix("."), !isDirectory(join(path, name)) { names.append(name) }
        }
        return names.sorted()
    }

    // MARK: Writing

    /// The text of a public key file.
    public static func publicKeyText(_ key: CurvePublicKey, comment: String? = nil) -> String {
        "# Concierge CURVE public key (Z85)\(comment.map { ": \($0)" } ?? ""). Share it: list it in the broker's "
            + "allowlist, or give it to the clients and workers of this broker.\n\(key.z85)\n"
    }

    /// The text of a secret key file.
    public static func secretKeyText(_ key: CurveSecretKey, comment: String? = nil) -> String {
        "# Concierge CURVE secret key (Z85)\(comment.map { ": \($0)" } ?? ""). Keep it private: mode 0600, never "
            + "shared, never logged.\n\(key.z85)\n"
    }

    /// Writes `pair` as `<base>.pub` (mode 0644) and `<base>.secret` (mode 0600), creating missing parent
    /// directories (mode 0700). Without `overwrite`, fails with ``CurveKeyError/Code/fileExists`` before writing
    /// anything if either file exists. Returns the two paths.
    @discardableResult
    public static func write(
        _ pair: CurveKeyPair,
        base: String,
        overwrite: Bool = false,
        comment: String? = nil
    ) throws(CurveKeyError) -> (publicKey: String, secretKey: String) {
        let publicPath = base + ".pub"
        let secretPath = base + ".secret"
        if !overwrite {
            for path in [secretPath, publicPath] where exists(path) {
                throw CurveKeyError(
                    code: .fileExists,
                    message: "\(path) exists; not overwriting it (give --force to replace the key pair)"
                )
            }
        }
        try makeParentDirectories(of: base)
        try writeFile(
            secretKeyText(pair.secretKey, comment: comment), to: secretPath, mode: 0o600, overwrite: overwrite)
        try writeFile(
            publicKeyText(pair.publicKey, comment: comment), to: publicPath, mode: 0o644, overwrite: overwrite)
        return (publicPath, secretPath)
    }

    static func writeFile(_ text: String, to path: String, mode: mode_t, overwrite: Bool) throws(CurveKeyError) {
        func failure(_ reason: String) -> CurveKeyError {
            CurveKeyError(code: errno == EEXIST ? .fileExists : .writeFailed, message: "\(path): \(reason)")
        }
        // Created with mode 0600 whatever it ends up with, so a secret is never readable by others, not even
        // for a moment; O_EXCL unless overwriting, so an existing file is never replaced by accident.
        let flags = O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW | (overwrite ? O_TRUNC : O_EXCL)
        let descriptor = open(path, flags, mode_t(0o600))
        guard descriptor >= 0 else { throw failure(systemError()) }
        defer { close(descriptor) }
        // An overwritten file keeps its old mode unless set again.
        guard fchmod(descriptor, mode) == 0 else { throw failure(systemError()) }
        let bytes = Array(text.utf8)
        var written = 0
        while written < bytes.count {
            let count = bytes[written...].withUnsafeBytes { _systemWrite(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw failure(systemError())
            }
            written += count
        }
        guard fsync(descriptor) == 0 else { throw failure(systemError()) }
    }

    static func makeParentDirectories(of path: String) throws(CurveKeyError) {
        var components = path.split(separator: "/", omittingEmptySubsequences: false).dropLast()
        var prefix = path.hasPrefix("/") ? "/" : ""
        if prefix == "/" { components = components.dropFirst() }
        for component in components where !component.isEmpty {
            prefix += component
            if !exists(prefix) && mkdir(prefix, 0o700) != 0 && errno != EEXIST {
                throw CurveKeyError(code: .writeFailed, message: "\(prefix): cannot create directory: \(systemError())")
            }
            prefix += "/"
        }
    }

    static func exists(_ path: String) -> Bool {
        var status = stat()
        return lstat(path, &status) == 0
    }

    static func join(_ directory: String, _ name: String) -> String {
        directory.hasSuffix("/") ? directory + name : directory + "/" + name
    }

    static func systemError() -> String {
        String(cString: strerror(errno))
    }
}

/// POSIX `write(2)` (``CurveKeyFile/write(_:base:overwrite:comment:)`` hides the global name inside the type).
private func _systemWrite(_ descriptor: Int32, _ buffer: UnsafeRawPointer?, _ count: Int) -> Int {
    write(descriptor, buffer, count)
}
