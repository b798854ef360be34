public import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A private PostgreSQL server from Debian's packages (`postgresql`, which `Scripts/setup` installs), started for a
/// test in a temporary directory, on a free TCP port of `host` and a Unix socket in that directory, and stopped by
/// its pid when the test is done.
///
/// PostgreSQL refuses to run as root: when the test runs as root, `initdb` and the server run as the `postgres` user
/// (through `setpriv`, which executes the server in place, so the pid is the server's). The cluster trusts local
/// connections (`-A trust`) and has a database and a user named `concierge`.
public final class PostgresServer: @unchecked Sendable {
    /// The cluster's directory (data and the Unix socket).
    public let directory: URL
    /// The address the server listens on.
    public let host: String
    /// Its TCP port.
    public let port: Int
    private var server: Process?
    private let lock = NSLock()

    /// A URL for the `concierge` database.
    public var url: String { "postgres://concierge@\(host):\(port)/concierge" }

    /// The folder of Debian's PostgreSQL programs (`/usr/lib/postgresql/<version>/bin`, newest first), or nil.
    public static var binDirectory: URL? {
        let root = URL(fileURLWithPath: "/usr/lib/postgresql")
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: root.path)) ?? []
        for version in versions.sorted(by: { (Int($0) ?? 0) > (Int($1) ?? 0) }) {
            let bin = root.appendingPathComponent(version).appendingPathComponent("bin")
            if FileManager.default.isExecutableFile(atPath: bin.appendingPathComponent("initdb").path) { return bin }
        }
        return nil
    }

    /// Creates a cluster and starts its server; returns once it accepts connections (at most `seconds`).
    public init(host: String = "127.0.0.1", seconds: Double = 60) throws {
        guard let bin = Self.binDirectory else { throw Failure("PostgreSQL is not installed (run Scripts/setup)") }
        self.host = host
        port = try Self.freePort(host: host)
        directory = URL(fileURLWithPath: "/tmp").appendingPathComponent(
            "concierge-pg-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        if getuid() == 0 { try Self.run("/bin/chown", ["postgres:postgres", directory.path]) }
        let data = directory.appendingPathComponent("data").path
        try Self.run(
            bin.appendingPathComponent("initdb").path,
            ["-D", data, "-A", "trust", "-U", "concierge", "--no-sync", "-E", "UTF8"], asPostgres: true)
        try start(seconds: seconds)
        try Self.run(
            bin.appendingPathComponent("createdb").path,
            ["-h", host, "-p", String(port), "-U", "concierge", "concierge"])
    }

    /// Starts the server (again, after ``stop()``: the data stays); returns once it accepts connections.
    public func start(seconds: Double = 60) throws {
        guard pid == 0, let bin = Self.binDirectory else { return }
        let data = directory.appendingPathComponent("data").path
        let process = Self.process(
            bin.appendingPathComponent("postgres").path,
            [
                "-D", data, "-h", host, "-p", String(port), "-k", directory.path, "-c", "fsync=on",
                "-c", "max_connections=50",
            ], asPostgres: true)
        let log = directory.appendingPathComponent("server.log")
        if !FileManager.default.fileExists(atPath: log.path) {
            _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        }
        let handle = try FileHandle(forWritingTo: log)
        handle.seekToEndOfFile()
        process.standardOutput = handle
        process.standardError = handle
        try process.run()
        lock.withLock { server = process }
        let end = Date().addingTimeInterval(seconds)
        while true {
            let ready =
                (try? Self.run(bin.appendingPathComponent("pg_isready").path, ["-h", host, "-p", String(port), "-q"]))
                != nil
            if ready { return }
            guard process.isRunning, Date() < end else {
                stop()
                throw Failure("the PostgreSQL server did not start: \(self.log)")
            }
            usleep(50_000)
        }
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(at: directory)
    }

    /// The server's pid (0 once stopped).
    public var pid: Int32 { lock.withLock { server?.isRunning == true ? server!.processIdentifier : 0 } }

    /// The server's log so far.
    public var log: String {
        (try? String(contentsOf: directory.appendingPathComponent("server.log"), encoding: .utf8)) ?? ""
    }

    /// Runs SQL through `psql` and returns what it prints (unaligned, tuples only).
    @discardableResult
    public func sql(_ statement: String) throws -> String {
        guard let bin = Self.binDirectory else { throw Failure("PostgreSQL is not installed") }
        return try Self.run(
            bin.appendingPathComponent("psql").path,
            [
                "-h", host, "-p", String(port), "-U", "concierge", "-d", "concierge", "-At", "-v", "ON_ERROR_STOP=1",
                "-c", statement,
            ])
    }

    /// Stops the server (fast shutdown: SIGINT), by its pid, and waits for it; SIGKILL after 10 s.
    public func stop() {
        guard
            let process = lock.withLock({ () -> Process? in
                let process = server
                server = nil
                return process
            })
        else { return }
        if process.isRunning { kill(process.processIdentifier, SIGINT) }
        let end = Date().addingTimeInterval(10)
        while process.isRunning && Date() < end { usleep(20_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    /// An error of the test server.
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
        init(_ description: String) { self.description = description }
    }

    // MARK: Helpers

    private static func process(_ path: String, _ arguments: [String], asPostgres: Bool) -> Process {
        let process = Process()
        if asPostgres && getuid() == 0 {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
            process.arguments = ["--reuid=postgres", "--regid=postgres", "--init-groups", "--", path] + arguments
        } else {
            process.executableURL = URL(fileURLWithPath: path)
            process.arguments = arguments
        }
        return process
    }

    /// Runs a program to its end; throws with its output when it fails.
    @discardableResult
    private static func run(_ path: String, _ arguments: [String], asPostgres: Bool = false) throws -> String {
        let process = process(path, arguments, asPostgres: asPostgres)
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw Failure(
                "\(URL(fileURLWithPath: path).lastPathComponent) failed (\(process.terminationStatus)): \(output)")
        }
        return output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// A TCP port nobody listens on at the moment (the kernel's choice for port 0).
    private static func freePort(host: String) throws -> Int {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw Failure("socket() failed") }
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        inet_pton(AF_INET, host, &address.sin_addr)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0 else { throw Failure("bind() failed") }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
