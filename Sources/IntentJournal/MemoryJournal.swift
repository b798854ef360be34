import Synchronization

/// A journal in memory, with the same semantics as ``SQLiteJournal`` (including the operations it rejects): for
/// tests of code that uses a ``Journal``, and the reference the SQLite journal is tested against. Nothing survives
/// the process; ``recover()`` returns what was committed.
public final class MemoryJournal: Journal {
    private struct Contents {
        var state = JournalState()
        var highestAccepted: UInt64 = 0
        var recorder = CommitRecorder()
        var closed = false
    }

    private let contents: Mutex<Contents>
    public let fingerprintSeeds: [UInt64] = [.random(in: .min ... .max), .random(in: .min ... .max)]

    /// An empty journal, or one holding `state` (as if recovered from it).
    public init(_ state: JournalState = JournalState()) {
        var contents = Contents()
        contents.state = state
        contents.highestAccepted = max(state.nextRequestID, 1) - 1
        self.contents = Mutex(contents)
    }

    public func recover() throws(JournalError) -> JournalState {
        try contents.withLock { contents throws(JournalError) in
            guard !contents.closed else { throw Self.closedError }
            var state = contents.state
            state.nextRequestID = max(contents.highestAccepted + 1, (state.requests.map(\.id).max() ?? 0) + 1, 1)
            return state
        }
    }

    public func commit(_ operations: [JournalOperation]) throws(JournalError) {
        guard !operations.isEmpty else { return }
        try contents.withLock { contents throws(JournalError) in
            guard !contents.closed else { throw Self.closedError }
            var state = contents.state
            var highest = contents.highestAccepted
            for operation in operations { try Self.apply(operation, to: &state, highestAccepted: &highest) }
            contents.state = state
            contents.highestAccepted = highest
            contents.recorder.recordCommit(operations: operations.count, nanoseconds: 0)
        }
    }

    public func syncIfDue() throws(JournalError) {}

    public func close() {
        contents.withLock { $0.closed = true }
    }

    public var statistics: JournalStatistics {
        contents.withLock { $0.recorder.statistics }
    }

    private static let closedError = JournalError(code: .invalidOperation, message: "memory journal: closed.")

    private static func invalid(_ what: String) -> JournalError {
        JournalError(
            code: .invalidOperation,
            message: "memory journal: \(what). The commit was rolled back: nothing of it is written.")
    }

    private static func apply(
        _ operation: JournalOperation, to state: inout JournalState, highestAccepted: inout UInt64
    ) throws(JournalError) {
        func index(of request: UInt64) -> Int? { state.requests.firstIndex { $0.id == request } }
        switch operation {
        case .accepted(let request):
            guard request.id >= 1, request.id < UInt64(Int64.max) else {
                throw invalid("request id \(request.id) is out of range (1 up to 2^63 - 2)")
            }
            guard index(of: request.id) == nil else { throw invalid("request \(request.id) is open already") }
            let at = state.requests.firstIndex { $0.id > request.id } ?? state.requests.count
            state.requests.insert(request, at: at)
            highestAccepted = max(highestAccepted, request.id)
        case .attached(let request, let key):
            guard let at = index(of: request) else {
                throw invalid("a duplicate attached to request \(request), not open")
            }
            state.requests[at].listeners.append(key)
        case .detached(let request, let key):
            if let at = index(of: request) { state.requests[at].listeners.removeAll { $0 == key } }
        case .handleDispatched(let request):
            guard let at = index(of: request) else {
                throw invalid("handle dispatched for request \(request), not open")
            }
            state.requests[at].handleDispatched = true
        case .ended(let request, let results):
            guard let at = index(of: request) else { throw invalid("request \(request) ended but is not open") }
            state.requests.remove(at: at)
            for result in results { store(result, in: &state) }
        case .stored(let results):
            for result in results { store(result, in: &state) }
        case .keyRecord(let record):
            state.keyRecords.removeAll {
                $0.identity == record.identity && $0.intentType == record.intentType && $0.key == record.key
            }
            state.keyRecords.append(record)
        case .keyRemoved(let identity, let intentType, let key):
            state.keyRecords.removeAll { $0.identity == identity && $0.intentType == intentType && $0.key == key }
        case .resultsExpired(let storedBefore):
            state.results.removeAll { $0.storedAt < storedBefore }
        case .keyRecordsExpired(let endedBefore):
            state.keyRecords.removeAll { record in record.endedAt.map { $0 < endedBefore } ?? false }
        case .conversation(let conversation):
            state.conversations.removeAll { $0.scope == conversation.scope && $0.id == conversation.id }
            state.conversations.append(conversation)
        case .conversationRemoved(let scope, let id):
            state.conversations.removeAll { $0.scope == scope && $0.id == id }
        }
    }

    private static func store(_ result: JournalResult, in state: inout JournalState) {
        state.results.removeAll { $0.key == result.key }
        state.results.append(result)
    }
}
