import ConciergeJSON
import ConciergeTestKit
import Foundation
import Glibc
import Testing

extension EndToEnd {
    /// `concierge top` read as a person reads it: it runs in a detached tmux session sized 160×50 against a real
    /// broker and workers, and the test reads the screen (`tmux capture-pane`) until it shows what a known load must
    /// show.
    @Suite(.serialized) struct TopCommandTests {
        @Test func showsWorkersTheQueueAndRatesOfALoadThenItsTotals() async throws {
            let cluster = try Cluster()
            // The queue must stand for seconds to be seen: the protocol's plain admission rule (80% of the deadline),
            // since the standing-queue limit, on by default, would answer some of the 36 `busy` (OVERLOAD.md).
            try cluster.startBroker(["--http", "127.0.0.1:0", "--standing-queue-wait-ms", "0"])
            let port = try await httpPort(of: cluster)
            try cluster.startWorker("top-alpha", capacity: 2)
            try cluster.startWorker("top-beta", capacity: 1)
            let tmux = try Tmux()
            defer { tmux.stop() }
            try tmux.start(
                "top", Cluster.executable.path, "top", "--http", "http://127.0.0.1:\(port)", "--interval-ms", "500",
                "--iterations", "1200")

            // Both workers, idle, with their slots; the broker ready.
            try await tmux.waitForScreen("both workers with their slots") { screen in
                screen.row("top-alpha")?[1] == "0/2" && screen.row("top-beta")?[1] == "0/1"
                    && screen.lines.contains { $0.hasPrefix("READY ") }
            }

            // 36 Echo requests of 1 s each, 12 at a time, on 3 slots: 9 wait in the queue for about 9 s, the oldest
            // for up to 3 s (a queue column showing the wrong gauge, e.g. the oldest age, never shows 5 or more).
            try cluster.start(
                "load",
                [
                    "load", "--broker", cluster.frontend, "--concurrency", "12", "--requests", "36", "--duration",
                    "60s",
                    "--warmup", "0s", "--delay-ms", "1000", "--deadline-ms", "30000", "--drain-timeout", "30s",
                    "--json", "--quiet",
                ])
            var sawQueue = false
            var sawFinalRate = false
            var sawWorkerRate = false
            var sawFullWorkers = false
            try await tmux.waitForScreen("the Echo queue (depth ≥ 5, oldest > 0), a final rate, busy workers") {
                screen in
                // INTENT QUEUE OLDEST FINAL/s BUSY/s ERR/s RUN-p99 FINAL BUSY ERRORS
                if let echo = screen.row("Echo"), echo.count == 10 {
                    if let depth = Int(echo[1]), depth >= 5, echo[2] != "0s", echo[2] != "-" { sawQueue = true }
                    if let rate = Double(echo[3]), rate > 0 { sawFinalRate = true }
                }
                // WORKER JOBS/SLOTS JOBS/s JOBS
                if let alpha = screen.row("top-alpha"), let beta = screen.row("top-beta") {
                    if alpha[1] == "2/2" && beta[1] == "1/1" { sawFullWorkers = true }
                    if (Double(alpha[2]) ?? 0) > 0 || (Double(beta[2]) ?? 0) > 0 { sawWorkerRate = true }
                }
                return sawQueue && sawFinalRate && sawWorkerRate && sawFullWorkers
            }

            let status = await cluster.waitForExit("load", seconds: 120)
            #expect(status == 0, "load: \(cluster.log("load"))")
            let summaryLine = cluster.log("load").split(separator: "\n").last { $0.hasPrefix("{") } ?? ""
            let summary = try JSONValue.parse(String(summaryLine))
            #expect(summary["final_replies"] == 36, "load: \(cluster.log("load"))")

            // After the load: nothing queued or held, and the totals of the 36 requests.
            let final = try await tmux.waitForScreen("depth 0 and the totals of 36 finals") { screen in
                guard let echo = screen.row("Echo"), echo.count == 10, let alpha = screen.row("top-alpha"),
                    let beta = screen.row("top-beta")
                else { return false }
                return echo[1] == "0" && echo[2] == "0s" && echo[7] == "36" && echo[8] == "0" && echo[9] == "0"
                    && alpha[1] == "0/2" && beta[1] == "0/1" && (Int(alpha[3]) ?? 0) + (Int(beta[3]) ?? 0) == 36
                    && screen.lines.contains { $0.hasPrefix("since start: 36 final, 0 busy, 0 other errors") }
            }
            print("concierge top after the load:\n\(final.text)")

            // --once, for scripts: one plain frame (no escape codes) with the same totals.
            try cluster.start("once", ["top", "--http", "127.0.0.1:\(port)", "--once", "--interval-ms", "200"])
            #expect(await cluster.waitForExit("once", seconds: 60) == 0)
            let once = cluster.log("once")
            #expect(!once.contains("\u{1B}"))
            #expect(once.contains("since start: 36 final, 0 busy, 0 other errors"), "\(once)")
            #expect(Tmux.Screen(text: once).row("top-alpha")?[1] == "0/2", "\(once)")
        }

        @Test func saysUnreachableUntilTheBrokerStartsThenShowsIt() async throws {
            let cluster = try Cluster()
            let port = try freeLoopbackPort()
            let tmux = try Tmux()
            defer { tmux.stop() }
            try tmux.start(
                "top", Cluster.executable.path, "top", "--http", "127.0.0.1:\(port)", "--interval-ms", "300",
                "--iterations", "2000")
            try await tmux.waitForScreen("unreachable, connection refused") { screen in
                screen.lines.contains { $0.hasPrefix("UNREACHABLE ") && $0.contains("refused") }
                    && screen.lines.contains { $0.hasPrefix("retrying every 300ms; never answered") }
            }
            // --once against it: says why on standard error and exits 1, without a frame that says "retrying".
            try cluster.start("once", ["top", "--http", "127.0.0.1:\(port)", "--once"])
            #expect(await cluster.waitForExit("once", seconds: 60) == 1)
            let once = cluster.log("once")
            #expect(
                once.contains("concierge top: the broker's /metrics did not answer: 127.0.0.1:\(port): "), "\(once)")
            #expect(once.contains("connection refused"), "\(once)")
            #expect(!once.contains("retrying"), "\(once)")
            #expect(!once.contains("UNREACHABLE"), "\(once)")
            try cluster.startBroker(["--http", "127.0.0.1:\(port)"])
            try await tmux.waitForScreen("the broker, not ready without workers") { screen in
                !screen.text.contains("UNREACHABLE") && screen.lines.contains { $0.hasPrefix("NOT READY ") }
                    && screen.lines.contains("(no workers)")
            }
            try cluster.startWorker("top-gamma", capacity: 3)
            try await tmux.waitForScreen("ready with the worker") { screen in
                screen.lines.contains { $0.hasPrefix("READY ") } && screen.row("top-gamma")?[1] == "0/3"
            }
            // The broker goes away: the screen says so again.
            cluster.signal("broker", SIGKILL)
            try await tmux.waitForScreen("unreachable again, with the time of the last answer") { screen in
                screen.lines.contains { $0.hasPrefix("UNREACHABLE ") }
                    && screen.lines.contains { $0.hasPrefix("retrying every 300ms; last answer ") }
            }
        }

        /// The port of the broker's `--http 127.0.0.1:0`, from its log line `http ready … http=127.0.0.1:PORT`.
        func httpPort(of cluster: Cluster) async throws -> Int {
            var port: Int?
            try await waitUntil("the broker logs its HTTP port\n\(cluster.log("broker"))") {
                for line in cluster.log("broker").split(separator: "\n") where line.contains("http ready") {
                    if let range = line.range(of: "127.0.0.1:") {
                        port = Int(line[range.upperBound...].prefix { $0.isNumber })
                    }
                }
                return port != nil
            }
            return port!
        }

        /// A loopback TCP port nothing listens on (bound once by the kernel's choice, then closed).
        func freeLoopbackPort() throws -> Int {
            let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            defer { close(socket) }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let bound = withUnsafeMutablePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(socket, $0, length) == 0 && getsockname(socket, $0, &length) == 0
                }
            }
            guard bound else { throw WaitTimedOut(description: "no free port: errno \(errno)") }
            return Int(UInt16(bigEndian: address.sin_port))
        }
    }
}

/// A private tmux server (its own socket in the test's directory) whose sessions run commands in a terminal of
/// 160×50; ``stop()`` kills that server and so everything it runs.
struct Tmux {
    static let executable = "/usr/bin/tmux"
    let socket: String

    /// What a pane shows.
    struct Screen {
        let text: String
        var lines: [String] { text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) }

        /// The cells (split on spaces) of the first line whose first cell is `name`.
        func row(_ name: String) -> [String]? {
            lines.lazy.map { $0.split(separator: " ").map(String.init) }.first { $0.first == name }
        }
    }

    /// A server of its own, on a socket in the temporary directory (not in a cluster's directory, which goes away
    /// with the cluster, possibly before the test's last line).
    init() throws {
        guard FileManager.default.isExecutableFile(atPath: Self.executable) else {
            throw WaitTimedOut(description: "\(Self.executable) is missing (Scripts/setup installs tmux)")
        }
        socket =
            FileManager.default.temporaryDirectory
            .appendingPathComponent("concierge-tmux-\(UInt32.random(in: 0...UInt32.max)).sock").path
    }

    /// Runs `tmux -S socket <arguments>` to its end and returns its output. It is spawned and waited for directly
    /// (posix_spawn, waitpid), its output going to a file: the server that `new-session` starts outlives the client
    /// and would hold a pipe open for ever.
    @discardableResult
    func run(_ arguments: [String]) throws -> String {
        let outputPath = socket + ".out"
        let argv = ([Self.executable, "-u", "-S", socket, "-f", "/dev/null"] + arguments).map { strdup($0) } + [nil]
        var environment = ProcessInfo.processInfo.environment
        environment["TERM"] = "xterm-256color"
        environment["TMUX"] = nil
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for pointer in argv + envp { free(pointer) } }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        // Signals unblocked and at their defaults: the spawning thread blocks some, and a tmux server that inherited
        // that would never see its pane's SIGCHLD or a SIGTERM.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        var allSignals = sigset_t()
        sigfillset(&allSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        posix_spawnattr_setsigdefault(&attributes, &allSignals)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, Self.executable, &actions, &attributes, argv, envp)
        guard spawned == 0 else { throw WaitTimedOut(description: "posix_spawn tmux: error \(spawned)") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let text = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
        // Exited (low 7 bits 0) with status 0.
        guard status & 0x7f == 0 && (status >> 8) & 0xff == 0 else {
            throw WaitTimedOut(description: "tmux \(arguments.joined(separator: " ")) (status \(status)): \(text)")
        }
        return text
    }

    /// Starts `command` in a new detached session `name`; the pane stays when it exits (to read why).
    func start(_ name: String, _ command: String...) throws {
        try run(["new-session", "-d", "-s", name, "-x", "160", "-y", "50"] + command)
        try run(["set-option", "-t", name, "remain-on-exit", "on"])
    }

    /// What session `name`'s pane shows now.
    func screen(_ name: String = "top") throws -> Screen { Screen(text: try run(["capture-pane", "-p", "-t", name])) }

    /// Reads the screen until `condition` holds (bounded); returns that screen.
    @discardableResult
    func waitForScreen(
        _ what: String, timeout: Duration = .seconds(60), _ condition: (Screen) throws -> Bool
    ) async throws -> Screen {
        let end = ContinuousClock.now + timeout
        var last = Screen(text: "")
        while true {
            last = try screen()
            if try condition(last) { return last }
            guard ContinuousClock.now < end else {
                throw WaitTimedOut(description: "the screen did not show \(what); it shows:\n\(last.text)")
            }
            try await Task.sleep(for: .milliseconds(100))
        }
    }

    /// Kills this test's tmux server (and the commands in its sessions).
    func stop() {
        _ = try? run(["kill-server"])
        try? FileManager.default.removeItem(atPath: socket)
        try? FileManager.default.removeItem(atPath: socket + ".out")
    }
}
