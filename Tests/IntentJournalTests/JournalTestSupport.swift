import Foundation
import IntentJournal

/// A unique temporary directory for one test, removed when the value goes away.
final class TemporaryDirectory {
    let path: String

    init() throws {
        path =
            FileManager.default.temporaryDirectory
            .appendingPathComponent("concierge-journal-test-\(UInt64.random(in: 0...UInt64.max))").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    /// A path inside the directory.
    func file(_ name: String) -> String { path + "/" + name }

    /// A new, empty journal in the directory.
    func journal(_ name: String = "journal.sqlite") throws -> String {
        let path = file(name)
        try SQLiteJournal.create(path: path)
        return path
    }
}

/// Test values.
enum Sample {
    static func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    static func key(_ client: String, _ request: String, version: UInt8 = 2) -> JournalRequestKey {
        JournalRequestKey(client: bytes(client), requestID: bytes(request), version: version)
    }

    static func request(
        _ id: UInt64, client: String = "client-a", idempotencyKey: [UInt8]? = nil, body: [UInt8]? = nil
    ) -> JournalRequest {
        JournalRequest(
            id: id, client: bytes(client), requestID: bytes("req-\(id)"), identity: [],
            intentType: bytes("RequestRide"), phase: "lifecycle",
            body: body ?? (0..<300).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ Int(id)) },
            deadlineMilliseconds: 5000, acceptedAt: 1_700_000_000_000 + Int64(id), idempotencyKey: idempotencyKey,
            attempt: 1, version: 2)
    }

    static func result(_ key: JournalRequestKey, storedAt: Int64, isError: Bool = false) -> JournalResult {
        JournalResult(
            key: key, isError: isError, phase: isError ? "error" : "handle", body: bytes("{\"ok\":true}"),
            storedAt: storedAt)
    }

    static func keyRecord(_ key: String, state: JournalKeyRecord.State, endedAt: Int64?) -> JournalKeyRecord {
        JournalKeyRecord(
            identity: bytes("identity-1"), intentType: bytes("SendPayment"), key: bytes(key),
            fingerprint: (0..<16).map { UInt8($0) }, attempts: 2, state: state, endedAt: endedAt)
    }
}

extension Sample {
    /// A conversation record whose state is a small JSON document naming its turn.
    static func conversation(_ id: String, scope: String = "client-a", turn: Int, at: Int64) -> JournalConversation {
        JournalConversation(
            scope: bytes(scope), id: bytes(id), state: bytes("{\"id\":\"\(id)\",\"turn\":\(turn)}"), updatedAt: at)
    }
}

extension SQLiteJournal {
    /// Opens `path`, recovers, closes.
    static func recovered(_ path: String) throws -> JournalState {
        let journal = try SQLiteJournal(path: path)
        defer { journal.close() }
        return try journal.recover()
    }
}
