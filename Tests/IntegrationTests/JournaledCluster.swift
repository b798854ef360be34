import ConciergeJSON
import ConciergeTestKit
import IntentClient
import IntentWire

/// An Echo intent whose handler waits `delayMs` milliseconds in `phase` (the example `EchoHandler`).
func delayedEcho(_ text: String, delayMs: Int = 0, in phase: String = "handle") -> JSONValue {
    [
        "type": "Echo",
        "parameters": ["text": .string(text), "delayMs": .int(Int64(delayMs)), "delayPhase": .string(phase)],
    ]
}

extension Cluster {
    /// Makes a journal at `journal` (a SQLite path or a PostgreSQL URL), starts a broker on it (with `flags`) and one
    /// worker, "w1", of capacity 1, waits until they serve, and has one request answered ("done", returned with the
    /// client) for later STATUS checks.
    func startJournaled(_ journal: String, flags: [String] = []) async throws -> (ConciergeClient, done: Reply) {
        let initialized = try runConcierge(["journal", "init", journal])
        guard initialized.status == 0 else { throw WaitTimedOut(description: "journal init: \(initialized.error)") }
        try startBroker(["--journal", journal, "--hard-limit-ms", "60000"] + flags)
        try startWorker("w1", capacity: 1)
        let client = try client()
        try await waitUntilServing(client)
        let done = try await client.request(intent: delayedEcho("before"), phase: .handle, requestID: "done")
        guard done.status == .final else { throw WaitTimedOut(description: "request done ended \(done.status)") }
        return (client, done)
    }
}
