import ConciergeJSON
import ConciergeTestKit
import Foundation
import IntentClient
import Testing

#if canImport(Glibc)
    import Glibc
#endif

extension EndToEnd {
    /// `concierge pool` and `concierge up` started without `--control` listen in this user's control directory,
    /// where `concierge scale` without `--control` finds them; `concierge up --executable` runs your own worker.
    /// Every test sets the directory (`CONCIERGE_RUNTIME_DIR`) inside its cluster's folder, so that runs side by side,
    /// and the pools of the machine's users, never meet.
    @Suite(.serialized) struct PoolControlAndUpTests {
        /// The environment that puts the control directory in the cluster's folder.
        static func environment(_ cluster: Cluster) -> [String: String] {
            ["CONCIERGE_RUNTIME_DIR": cluster.directory.appendingPathComponent("run").path]
        }

        /// Runs `concierge <arguments>` to its end; its exit status and what it wrote (standard output and error).
        static func run(
            _ cluster: Cluster, _ name: String, _ arguments: [String], environment: [String: String]
        ) async throws -> (status: Int32?, output: String) {
            try cluster.start(name, arguments, environment: environment)
            let status = await cluster.waitForExit(name, seconds: 30)
            return (status, cluster.log(name))
        }

        /// `scale --status` without `--control` until it answers a pool of `size` workers; the answer.
        static func waitForStatus(
            _ cluster: Cluster, size: Int, environment: [String: String], tag: String
        ) async throws -> JSONValue {
            var attempt = 0
            var last = ""
            let end = Date().addingTimeInterval(30)
            while Date() < end {
                attempt += 1
                let run = try await run(
                    cluster, "scale-\(tag)-\(attempt)", ["scale", "--status"], environment: environment)
                last = run.output
                if run.status == 0, let status = try? JSONValue.parse(run.output.trimmingBlanks()),
                    status["size"]?.intValue == size, status["workers"]?.objectValue?.count == size
                {
                    return status
                }
                try await Task.sleep(for: .milliseconds(100))
            }
            throw WaitTimedOut(description: "scale --status never showed \(size) workers: \(last)")
        }

        @Test func scaleWithoutControlFindsThePoolOrUpStartedWithoutControl() async throws {
            let cluster = try Cluster()
            let environment = Self.environment(cluster)
            let directory = environment["CONCIERGE_RUNTIME_DIR"]!
            try cluster.startBroker()
            try cluster.start(
                "pool", ["pool", "--broker", cluster.backend, "--workers", "2", "--heartbeat-ms", "250"],
                environment: environment)
            _ = try await Self.waitForStatus(cluster, size: 2, environment: environment, tag: "pool")
            // Its socket is the pool's own, in a directory only this user may write to.
            let socket = "\(directory)/pool-\(cluster.pid("pool")).ctl"
            #expect(FileManager.default.fileExists(atPath: socket))
            var status = stat()
            #expect(stat(directory, &status) == 0 && status.st_mode & 0o077 == 0 && status.st_uid == getuid())
            let resized = try await Self.run(cluster, "scale-to-3", ["scale", "3"], environment: environment)
            #expect(resized.status == 0 && resized.output.contains(#""size":3"#), "\(resized.output)")
            _ = try await Self.waitForStatus(cluster, size: 3, environment: environment, tag: "resized")

            // Two pools: scale names both and asks which.
            try cluster.start(
                "second-pool",
                ["pool", "--broker", cluster.backend, "--workers", "1", "--heartbeat-ms", "250", "--name-prefix", "b"],
                environment: environment)
            let secondSocket = "\(directory)/pool-\(cluster.pid("second-pool")).ctl"
            try await waitUntil("the second pool listens") { FileManager.default.fileExists(atPath: secondSocket) }
            let ambiguous = try await Self.run(cluster, "scale-two", ["scale", "--status"], environment: environment)
            #expect(ambiguous.status == 1, "\(ambiguous.output)")
            #expect(ambiguous.output.contains("concierge scale: several-pools: 2 pools run"), "\(ambiguous.output)")
            #expect(ambiguous.output.contains("ipc://\(socket) (pid \(cluster.pid("pool"))"), "\(ambiguous.output)")
            #expect(ambiguous.output.contains("ipc://\(secondSocket)"), "\(ambiguous.output)")
            // Killed, the second pool leaves its socket behind: scale passes over it (and removes it).
            cluster.signal("second-pool", SIGKILL)
            _ = await cluster.waitForExit("second-pool")
            _ = try await Self.waitForStatus(cluster, size: 3, environment: environment, tag: "killed")
            #expect(!FileManager.default.fileExists(atPath: secondSocket))

            // No pool: scale says so, and where it looked.
            cluster.signal("pool", SIGTERM)
            #expect(await cluster.waitForExit("pool") != nil)
            let none = try await Self.run(cluster, "scale-none", ["scale", "--status"], environment: environment)
            #expect(none.status == 1, "\(none.output)")
            #expect(none.output.contains("concierge scale: no-pool:") && none.output.contains(directory))

            // `up` without --control: the same.
            try cluster.start(
                "up",
                [
                    "up", "--frontend", "ipc://\(cluster.directory.path)/up-frontend", "--backend",
                    "ipc://\(cluster.directory.path)/up-backend", "--workers", "1",
                ], environment: environment)
            let up = try await Self.waitForStatus(cluster, size: 1, environment: environment, tag: "up")
            #expect(up["workers"]?["0"]?.intValue != nil)
            #expect(FileManager.default.fileExists(atPath: "\(directory)/pool-\(cluster.pid("up")).ctl"))
            cluster.signal("up", SIGTERM)
            #expect(await cluster.waitForExit("up") == 0)
        }

        @Test func upRunsYourOwnWorkerExecutableWithTheArgumentsAfterTheTerminator() async throws {
            let cluster = try Cluster()
            let environment = Self.environment(cluster)
            // Your own worker: here a copy of the slim worker under another name (built on WorkerMain, as yours is).
            let worker = cluster.directory.appendingPathComponent("my-worker")
            try FileManager.default.copyItem(at: Cluster.slimWorkerExecutable, to: worker)
            try cluster.start(
                "up",
                [
                    "up", "--frontend", cluster.frontend, "--backend", cluster.backend, "--workers", "2",
                    "--name-prefix", "mine", "--executable", worker.path, "--", "--capacity", "3",
                ], environment: environment)
            let client = try ConciergeClient(configuration: .init(brokerEndpoint: cluster.frontend))
            defer { client.close() }
            try await cluster.waitUntilServing(client, intent: "Echo")
            let status = try await Self.waitForStatus(cluster, size: 2, environment: environment, tag: "up")
            for pid in (status["workers"]?.objectValue ?? [:]).values.compactMap(\.intValue) {
                let arguments = String(
                    decoding: FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") ?? Data(), as: UTF8.self
                ).split(separator: "\0").map(String.init)
                #expect(arguments == [worker.path, "--capacity", "3"], "worker \(pid)")
                let variables = String(
                    decoding: FileManager.default.contents(atPath: "/proc/\(pid)/environ") ?? Data(), as: UTF8.self
                ).split(separator: "\0").map(String.init)
                #expect(variables.contains("CONCIERGE_BROKER=\(cluster.backend)"), "worker \(pid)")
                #expect(variables.contains { $0.hasPrefix("CONCIERGE_WORKER_NAME=mine-") }, "worker \(pid)")
            }
            let reply = try await client.request(intent: ["type": "Echo", "parameters": ["text": "mine"]])
            #expect(reply.status == .final && reply.json?["handle"]?["data"]?["text"] == "mine")
            #expect(reply.json?["handle"]?["data"]?["worker"]?.stringValue?.hasPrefix("mine-") == true)
            cluster.signal("up", SIGTERM)
            #expect(await cluster.waitForExit("up") == 0)

            // Arguments after -- without --executable are a usage error.
            let refused = try await Self.run(
                cluster, "up-without-executable", ["up", "--frontend", cluster.frontend, "--", "--capacity", "3"],
                environment: environment)
            #expect(refused.status == 64 && refused.output.contains("give --executable PATH"), "\(refused.output)")
        }
    }
}

extension String {
    /// The string without leading and trailing white space and line ends.
    fileprivate func trimmingBlanks() -> String { trimmingCharacters(in: .whitespacesAndNewlines) }
}
