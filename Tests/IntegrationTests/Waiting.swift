import ConciergeJSON
import ConciergeTestKit
import Foundation
import IntentClient
import Synchronization

/// Waits for observable state instead of sleeping for a fixed time and assuming that something has happened by then.

/// A condition did not hold within its (generous) time limit.
struct WaitTimedOut: Error, CustomStringConvertible {
    let description: String
}

/// Polls `condition` until it holds; throws after `timeout`, which is generous: on a busy machine things are slow, and
/// a wait that ends early costs nothing.
func waitUntil(
    _ what: @autoclosure () -> String, timeout: Duration = .seconds(30), poll: Duration = .milliseconds(10),
    _ condition: () async throws -> Bool
) async throws {
    let end = ContinuousClock.now + timeout
    while try await !condition() {
        guard ContinuousClock.now < end else { throw WaitTimedOut(description: "timed out waiting until \(what())") }
        try await Task.sleep(for: poll)
    }
}

extension ConciergeClient {
    /// Asks STATUS about `requestID` (sent on this connection) until the answer satisfies `condition`; returns it.
    @discardableResult
    func waitForStatus(
        of requestID: String, timeout: Duration = .seconds(30), until condition: (Reply) -> Bool
    ) async throws -> Reply {
        let end = ContinuousClock.now + timeout
        while true {
            let reply = try await status(of: requestID)
            if condition(reply) { return reply }
            guard ContinuousClock.now < end else {
                throw WaitTimedOut(description: "STATUS of \(requestID) stayed \(reply.status) \(reply.body_)")
            }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    /// Waits until the request's job is running on a worker (STATUS `progress`, state `running`, PROTOCOL.md 11.9),
    /// optionally on the named worker.
    func waitUntilRunning(_ requestID: String, on worker: String? = nil) async throws {
        try await waitForStatus(of: requestID) { reply in
            reply.status == .progress && reply.body_["state"] == "running"
                && (worker == nil || reply.body_["worker"]?.stringValue == worker)
        }
    }
}

extension Cluster {
    /// Waits until the broker's log has a line containing every one of `parts` (e.g. a worker registered).
    func waitForBrokerLog(_ parts: String...) async throws {
        try await waitUntil("the broker logs \(parts)\n\(log("broker"))") {
            log("broker").split(separator: "\n").contains { line in parts.allSatisfy { line.contains($0) } }
        }
    }
}

/// A count shared between tasks (e.g. replies received so far, to act once the load is under way).
final class Counter: Sendable {
    private let count = Mutex(0)

    func increment() { count.withLock { $0 += 1 } }

    var value: Int { count.withLock { $0 } }
}
