import ConciergeTestKit
import Foundation
import Glibc
import Testing

extension EndToEnd {
    /// What a newcomer's mistakes get: a message that names the flag and what is wrong, the right usage, and a
    /// non-zero exit status at once, not a stack of logs from services that started and stopped again.
    @Suite(.serialized) struct CommandLineMistakesTests {
        /// `--http` on a port another process holds: every command with `--http` ends at start, naming the flag and
        /// the address, with status 1 and no statistics dump from a broker that started and stopped.
        @Test func anHTTPPortInUseEndsTheCommandAtStartNamingTheFlagAndTheAddress() async throws {
            let cluster = try Cluster()
            let holder = try ListeningSocket()
            defer { holder.close() }
            let address = "127.0.0.1:\(holder.port)"
            for (name, arguments) in [
                ("broker", ["broker", "--frontend", cluster.frontend, "--backend", cluster.backend]),
                ("pool", ["pool", "--broker", cluster.backend, "--workers", "1", "--control", cluster.control]),
                ("up", ["up", "--frontend", cluster.frontend, "--backend", cluster.backend, "--workers", "1"]),
            ] {
                try cluster.start(name, arguments + ["--http", address])
                #expect(await cluster.waitForExit(name, seconds: 30) == 1, "\(name): \(cluster.log(name))")
                let log = cluster.log(name)
                #expect(log.contains("--http \(address): address already in use"), "\(name): \(log)")
                #expect(!log.contains("errno"), "\(name): \(log)")
                #expect(!log.contains("statistics"), "\(name): \(log)")
                #expect(!log.contains("broker ready"), "\(name): \(log)")
            }
        }

        /// `--frontend 127.0.0.1:7655` (no `tcp://`) is a usage error that says what a valid endpoint looks like,
        /// not an insecure-endpoint refusal.
        @Test func anEndpointWithoutTransportIsAUsageErrorShowingValidOnes() async throws {
            let cluster = try Cluster()
            for (name, arguments) in [
                ("frontend", ["broker", "--frontend", "127.0.0.1:7655", "--backend", cluster.backend]),
                ("backend", ["broker", "--frontend", cluster.frontend, "--backend", "localhost:7656"]),
                ("up", ["up", "--frontend", "127.0.0.1:7655", "--backend", cluster.backend]),
            ] {
                try cluster.start(name, arguments)
                #expect(await cluster.waitForExit(name, seconds: 30) == 64, "\(name): \(cluster.log(name))")
                let log = cluster.log(name)
                #expect(log.contains("is not a valid endpoint"), "\(name): \(log)")
                #expect(log.contains("tcp://HOST:PORT, ipc://PATH or inproc://NAME"), "\(name): \(log)")
                #expect(!log.contains("insecure-endpoint"), "\(name): \(log)")
                #expect(!log.contains("not a loopback"), "\(name): \(log)")
            }
        }

        @Test func aNegativeWorkerCountIsOutOfRangeNotAMissingValue() async throws {
            let cluster = try Cluster()
            for (name, value) in [("minus-one", "-1"), ("zero", "0"), ("too-many", "5000")] {
                try cluster.start(name, ["pool", "--broker", cluster.backend, "--workers", value])
                #expect(await cluster.waitForExit(name, seconds: 30) == 64, "\(name): \(cluster.log(name))")
                let log = cluster.log(name)
                #expect(log.contains("--workers \(value) is out of range: it takes 1...1024"), "\(name): \(log)")
                #expect(!log.contains("Missing value"), "\(name): \(log)")
            }
        }

        /// `send`'s mistakes come with `send`'s usage (status 64); an intent without a type is refused before
        /// anything is sent; a broker that is not there is reported within the connect timeout, naming it.
        @Test func sendReportsItsMistakesWithItsOwnUsageAndQuickly() async throws {
            let cluster = try Cluster()
            for (name, arguments) in [
                ("phase", ["send", "--broker", cluster.frontend, "--phase", "bogus", #"{"type": "Echo"}"#]),
                ("json", ["send", "--broker", cluster.frontend, "{not json"]),
                ("type", ["send", "--broker", cluster.frontend, #"{"parameters": {"text": "hi"}}"#]),
            ] {
                try cluster.start(name, arguments)
                #expect(await cluster.waitForExit(name, seconds: 30) == 64, "\(name): \(cluster.log(name))")
                let log = cluster.log(name)
                #expect(log.contains("Usage: concierge send"), "\(name): \(log)")
                #expect(!log.contains("Usage: concierge <subcommand>"), "\(name): \(log)")
            }
            #expect(cluster.log("phase").contains("--phase must be resolve, confirm, handle or lifecycle"))
            #expect(cluster.log("json").contains("the intent is not valid JSON"))
            #expect(cluster.log("type").contains("the intent has no \"type\""))

            // No broker at the endpoint: status 2 after the connect timeout, far sooner than the 13 s of the
            // client's reconnect timeout.
            let started = ContinuousClock.now
            try cluster.start(
                "nobody", ["send", "--broker", cluster.frontend, "--connect-timeout-ms", "500", #"{"type": "Echo"}"#])
            #expect(await cluster.waitForExit("nobody", seconds: 30) == 2, "\(cluster.log("nobody"))")
            #expect(ContinuousClock.now - started < .seconds(8))
            let log = cluster.log("nobody")
            #expect(log.contains("no broker answered at \(cluster.frontend) within 500 ms"), "\(log)")
            #expect(log.contains("nothing was sent"), "\(log)")
        }

        @Test func sendHelpDoesNotPromiseAFinalReplyAfterFailoverAndListsWhatItRetries() async throws {
            let cluster = try Cluster()
            try cluster.start("help", ["send", "--help"])
            #expect(await cluster.waitForExit("help", seconds: 30) == 0)
            let help = cluster.log("help").split(whereSeparator: \.isWhitespace).joined(separator: " ")
            #expect(help.contains("outcome-unknown when its handle job had already been given out"), "\(help)")
            #expect(!help.contains("gets its final reply from the one that takes over"), "\(help)")
            #expect(help.contains("retry busy, worker-lost, timeout, outcome-unknown, unavailable"), "\(help)")
        }
    }
}

/// A TCP socket listening on an ephemeral loopback port, so that another process cannot bind it.
struct ListeningSocket {
    let descriptor: Int32
    let port: Int

    init() throws {
        descriptor = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let descriptor = self.descriptor
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, length) == 0 && listen(descriptor, 4) == 0
                    && getsockname(descriptor, $0, &length) == 0
            }
        }
        guard bound else { throw WaitTimedOut(description: "could not listen on loopback: errno \(errno)") }
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    func close() { _ = Glibc.close(descriptor) }
}
