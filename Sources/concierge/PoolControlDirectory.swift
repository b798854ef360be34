import Foundation
import Glibc

/// Where a pool started without `--control` (`concierge pool`, `concierge up`) puts its control socket, and how
/// `concierge scale` without `--control` finds it.
///
/// The directory is this user's: `$CONCIERGE_RUNTIME_DIR` when set, else `$XDG_RUNTIME_DIR/concierge`, else
/// `/tmp/concierge-<uid>`. The pool creates it (mode 0700) and refuses one that is not a directory of this user that
/// others cannot write to. Each pool listens on `ipc://<directory>/pool-<pid>.ctl`, so that pools of several brokers
/// (and of several users) never share a socket; `concierge scale` uses the one pool that answers there, and lists
/// them when there are several.
enum PoolControlDirectory {
    /// The variable that names the directory (tests and several separate setups on one machine set it).
    static let environmentVariable = "CONCIERGE_RUNTIME_DIR"

    /// A pool's control socket found in the directory.
    struct Pool: Equatable {
        let endpoint: String
        let pid: Int32
    }

    /// Why the directory cannot be used, or why no one pool was found: a stable code and what to do.
    struct Failure: Error, CustomStringConvertible {
        /// `control-directory-unsafe`, `control-directory-failed`, `no-pool` or `several-pools`.
        let code: String
        let message: String
        var description: String { "\(code): \(message)" }
    }

    /// The directory's path, from the environment (see the type's documentation).
    static var path: String {
        let environment = ProcessInfo.processInfo.environment
        if let directory = environment[environmentVariable], !directory.isEmpty { return directory }
        if let runtime = environment["XDG_RUNTIME_DIR"], !runtime.isEmpty { return runtime + "/concierge" }
        return "/tmp/concierge-\(getuid())"
    }

    /// The default control endpoint of a pool run by this process; creates the directory when it is missing.
    static func endpointForThisProcess() throws(Failure) -> String {
        let directory = path
        try prepare(directory)
        return "ipc://\(directory)/pool-\(getpid()).ctl"
    }

    /// Creates `directory` (mode 0700) when it is missing; refuses one that is not a directory owned by this user,
    /// or that its group or others may write to (they could put a socket of their own there).
    static func prepare(_ directory: String) throws(Failure) {
        if mkdir(directory, 0o700) != 0 && errno != EEXIST {
            throw Failure(
                code: "control-directory-failed",
                message: "cannot create \(directory) for the pool's control socket: \(String(cString: strerror(errno)))"
                    + "; give --control ENDPOINT or set \(environmentVariable)")
        }
        var status = stat()
        guard lstat(directory, &status) == 0 else {
            throw Failure(
                code: "control-directory-failed",
                message: "cannot read \(directory): \(String(cString: strerror(errno))); give --control ENDPOINT")
        }
        guard status.st_mode & S_IFMT == S_IFDIR, status.st_uid == getuid(), status.st_mode & 0o022 == 0 else {
            throw Failure(
                code: "control-directory-unsafe",
                message: "\(directory) is not a directory of this user that only it may write to; give --control "
                    + "ENDPOINT or set \(environmentVariable) to one")
        }
    }

    /// The pools whose control socket in `directory` accepts a connection now. Sockets that nobody listens on and
    /// whose pool process is gone (a pool that was killed) are removed.
    static func runningPools(in directory: String = path) -> [Pool] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return [] }
        var pools: [Pool] = []
        for name in names.sorted() {
            guard name.hasPrefix("pool-"), name.hasSuffix(".ctl"),
                let pid = Int32(name.dropFirst("pool-".count).dropLast(".ctl".count)), pid > 0
            else { continue }
            let socketPath = directory + "/" + name
            if accepts(socketPath) {
                pools.append(Pool(endpoint: "ipc://" + socketPath, pid: pid))
            } else if kill(pid, 0) != 0 && errno == ESRCH {
                unlink(socketPath)
            }
        }
        return pools
    }

    /// The one running pool's control endpoint, for `concierge scale` without `--control`.
    static func singlePool(in directory: String = path) throws(Failure) -> String {
        let pools = runningPools(in: directory)
        switch pools.count {
        case 1:
            return pools[0].endpoint
        case 0:
            throw Failure(
                code: "no-pool",
                message: "no pool's control socket answers in \(directory) (pools started without --control listen "
                    + "there; \(environmentVariable) or XDG_RUNTIME_DIR choose it); give --control ENDPOINT")
        default:
            let list = pools.map { "\($0.endpoint) (pid \($0.pid): \(commandLine(of: $0.pid)))" }
            throw Failure(
                code: "several-pools",
                message: "\(pools.count) pools run: " + list.joined(separator: ", ")
                    + "; give --control with the one to use")
        }
    }

    /// Whether a process listens on the Unix socket at `path` (a plain connection, closed at once).
    private static func accepts(_ path: String) -> Bool {
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return false }
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            buffer.copyBytes(from: bytes)
            buffer[bytes.count] = 0
        }
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) == 0
            }
        }
    }

    /// A process's command line, for telling pools apart (`?` when it cannot be read).
    private static func commandLine(of pid: Int32) -> String {
        guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline"), !data.isEmpty else {
            return "?"
        }
        return data.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }.joined(separator: " ")
    }
}
