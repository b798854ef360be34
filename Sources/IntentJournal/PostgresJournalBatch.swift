#if PostgreSQL
    /// One commit of the PostgreSQL journal, arranged for set-based statements: the operations of a batch grouped by
    /// kind and reduced to their net effect, so that each kind is applied with one statement over arrays, in a fixed
    /// order, with the same end state as applying the operations one by one.
    ///
    /// The fixed order of one segment, and why it gives the sequential end state (each table's statements in this
    /// order; statements on different tables commute, so the store runs some of them together as one statement):
    /// 1. delete the results that expire (every row stored before the segment's highest `resultsExpired` bound, and the
    ///    results this segment stores that a later `resultsExpired` removes), then upsert the net results (per key, the
    ///    last one stored, in the order of their last store): a row that existed before the segment is removed by every
    ///    expiry of the segment, so the highest bound is its net effect; a row the segment stores ends as the segment's
    ///    last store of its key, unless an expiry after that store removes it.
    /// 2. the same for key records: deletes (`keyRemoved` as the last word on a key, `keyRecordsExpired`), then the net
    ///    upserts; and for conversations: deletes (`conversationRemoved` of a conversation before its last write, or as
    ///    the last word), then the net upserts.
    /// 3. insert the accepted requests (and advance `next_request_id`);
    /// 4. delete the listeners that a `detached` removes, then insert the listeners that survive the segment (those of
    ///    `accepted` requests and of `attached`, each after the last `detached` of its request and key): a detach
    ///    removes every listener of its pair written before it, so only the rows from before the segment need
    ///    deleting, and the attaches after the last detach are the pair's net effect; the survivors keep their order.
    /// 5. set `handle_dispatched`, and delete the ended requests (their listeners go with them).
    ///
    /// Requests, listeners, results and key records are separate tables (no foreign key but listeners → requests), so
    /// kinds on different tables commute. Within the requests and listeners, the fixed order holds while every request
    /// id sees, in one segment, at most one `accepted` (first) and at most one `ended` (last), with attaches, detaches
    /// and handle dispatches between: then its row exists whenever a statement needs it, exactly as in sequential order
    /// (a statement for a request that is not open fails as it would have: the foreign key of a listener, the count of
    /// rows dispatched or deleted). A batch that breaks that shape (an id accepted or used after it ended, accepted after
    /// it was used, accepted twice) is cut there into a new segment, applied after the previous one in the same
    /// transaction. A broker never does that (its ids are new and used after they are accepted), so its batches are one
    /// segment, and a commit is a constant number of statements whatever the batch size.
    ///
    /// Pair by pair, for operations on the same row (other pairs touch different rows or tables, and commute):
    /// - accepted / attached, detached, handleDispatched, ended of its id: the insert comes first, as the accept does
    ///   within a segment; an accept after one of them (or after an end) starts a new segment.
    /// - attached / detached of the same request and key: reduced to the net effect (deletes of older rows, then the
    ///   attaches after the last detach); attached twice keeps both rows, as the reference does.
    /// - attached, detached, handleDispatched / ended of the same id: the end comes last within a segment (an operation
    ///   after it starts a new segment, where the request is gone, as it would be); its listeners go with the row.
    /// - handleDispatched twice: one update of a distinct id (its count is checked against the distinct ids).
    /// - stored, ended's results / the same key again: the last store wins, at the place of the last store.
    /// - stored / resultsExpired: an expiry removes what was stored before it (reduced here) and every older row.
    /// - keyRecord / keyRecord, keyRemoved of the same key: the last word wins; removal deletes, a write upserts.
    /// - keyRecord / keyRecordsExpired: as results, for records with an end time.
    /// - conversation / conversation, conversationRemoved of the same scope and id: as key records, the last word wins.
    /// - accepted / next_request_id: only ever raised, to above the highest id accepted.
    struct PostgresJournalBatch {
        /// A listener row: a request and the key of a duplicate attached to it.
        struct Listener: Hashable {
            var request: UInt64
            var key: JournalRequestKey
        }

        /// The unique key of a key record.
        struct KeyRecordID: Hashable {
            var identity: [UInt8]
            var intentType: [UInt8]
            var key: [UInt8]
        }

        /// The unique key of a conversation.
        struct ConversationID: Hashable {
            var scope: [UInt8]
            var id: [UInt8]
        }

        /// A run of operations that the fixed order applies as they would be applied one by one.
        struct Segment {
            /// Requests to insert, in the order accepted.
            var accepted: [JournalRequest] = []
            /// Listener pairs whose rows from before the segment are removed.
            var listenerDeletes: [Listener] = []
            /// Listeners to insert, in order.
            var listenerInserts: [Listener] = []
            /// Requests whose handle job went out (distinct ids).
            var dispatched: [UInt64] = []
            /// Requests that ended (distinct ids).
            var ended: [UInt64] = []
            /// The highest `resultsExpired` bound, if any.
            var resultsExpireBefore: Int64?
            /// Keys of results this segment stores and a later `resultsExpired` removes.
            var resultDeletes: [JournalRequestKey] = []
            /// Results to upsert: per key, the last stored, in the order of their last store.
            var results: [JournalResult] = []
            /// The highest `keyRecordsExpired` bound, if any.
            var keyRecordsExpireBefore: Int64?
            /// Key records removed: the last word on the key was `keyRemoved`, or a later expiry removes the record.
            var keyRecordDeletes: [KeyRecordID] = []
            /// Key records to upsert: per key, the last written, in the order of their last write.
            var keyRecords: [JournalKeyRecord] = []
            /// Conversations removed (deleted before the upserts, so a later write of the same one still lands).
            var conversationDeletes: [ConversationID] = []
            /// Conversations to upsert: per scope and id, the last written, in the order of their last write.
            var conversations: [JournalConversation] = []

            /// The highest request id accepted in the segment.
            var highestAccepted: UInt64? { accepted.map(\.id).max() }
        }

        /// The segments, applied in order; one for any batch a broker commits.
        private(set) var segments: [Segment] = []
        /// The highest request id accepted in the batch.
        private(set) var highestAccepted: UInt64?

        /// Arranges `operations`; throws (a message) when an accepted request id is out of range (1 up to 2^63 - 2).
        init(_ operations: [JournalOperation]) throws(PostgresJournalBatch.OutOfRange) {
            var builder = Builder()
            for operation in operations {
                if case .accepted(let request) = operation, request.id < 1 || request.id >= UInt64(Int64.max) {
                    throw OutOfRange(id: request.id)
                }
                builder.add(operation)
            }
            builder.finishSegment()
            segments = builder.segments
            highestAccepted = segments.compactMap(\.highestAccepted).max()
        }

        /// An accepted request id out of range.
        struct OutOfRange: Error {
            var id: UInt64
        }

        /// Reduces operations into segments.
        private struct Builder {
            var segments: [Segment] = []

            // The segment being built.
            var accepted: [JournalRequest] = []
            var acceptedIDs: Set<UInt64> = []
            /// Ids used (attached, detached, dispatched, ended) in this segment without being accepted in it.
            var usedIDs: Set<UInt64> = []
            var endedIDs: Set<UInt64> = []
            var ended: [UInt64] = []
            var dispatched: [UInt64] = []
            var dispatchedIDs: Set<UInt64> = []
            var listenerDeletes: Set<Listener> = []
            var listenerDeleteOrder: [Listener] = []
            var listeners: [Listener?] = []
            var listenerIndexes: [Listener: [Int]] = [:]
            var resultsExpireBefore: Int64?
            var resultDeletes: Set<JournalRequestKey> = []
            var resultDeleteOrder: [JournalRequestKey] = []
            var results: [JournalResult?] = []
            var resultIndex: [JournalRequestKey: Int] = [:]
            var keyRecordsExpireBefore: Int64?
            var keyRecordDeletes: Set<KeyRecordID> = []
            var keyRecordDeleteOrder: [KeyRecordID] = []
            var keyRecords: [JournalKeyRecord?] = []
            var keyRecordIndex: [KeyRecordID: Int] = [:]
            var conversationDeletes: Set<ConversationID> = []
            var conversationDeleteOrder: [ConversationID] = []
            var conversations: [JournalConversation?] = []
            var conversationIndex: [ConversationID: Int] = [:]

            mutating func add(_ operation: JournalOperation) {
                switch operation {
                case .accepted(let request):
                    let id = request.id
                    if acceptedIDs.contains(id) || usedIDs.contains(id) || endedIDs.contains(id) { finishSegment() }
                    acceptedIDs.insert(id)
                    var row = request
                    row.listeners = []
                    accepted.append(row)
                    for key in request.listeners { attach(Listener(request: id, key: key)) }
                case .attached(let request, let key):
                    use(request)
                    attach(Listener(request: request, key: key))
                case .detached(let request, let key):
                    use(request)
                    detach(Listener(request: request, key: key))
                case .handleDispatched(let request):
                    use(request)
                    if dispatchedIDs.insert(request).inserted { dispatched.append(request) }
                case .ended(let request, let endings):
                    use(request)
                    endedIDs.insert(request)
                    ended.append(request)
                    for result in endings { store(result) }
                case .stored(let stored):
                    for result in stored { store(result) }
                case .keyRecord(let record):
                    let id = KeyRecordID(identity: record.identity, intentType: record.intentType, key: record.key)
                    if let at = keyRecordIndex[id] { keyRecords[at] = nil }
                    keyRecordIndex[id] = keyRecords.count
                    keyRecords.append(record)
                case .keyRemoved(let identity, let intentType, let key):
                    let id = KeyRecordID(identity: identity, intentType: intentType, key: key)
                    if let at = keyRecordIndex.removeValue(forKey: id) { keyRecords[at] = nil }
                    deleteKeyRecord(id)
                case .resultsExpired(let storedBefore):
                    resultsExpireBefore = max(resultsExpireBefore ?? .min, storedBefore)
                    for (at, result) in results.enumerated() {
                        guard let result, result.storedAt < storedBefore else { continue }
                        results[at] = nil
                        resultIndex[result.key] = nil
                        if resultDeletes.insert(result.key).inserted { resultDeleteOrder.append(result.key) }
                    }
                case .keyRecordsExpired(let endedBefore):
                    keyRecordsExpireBefore = max(keyRecordsExpireBefore ?? .min, endedBefore)
                    for (at, record) in keyRecords.enumerated() {
                        guard let record, let endedAt = record.endedAt, endedAt < endedBefore else { continue }
                        let id = KeyRecordID(identity: record.identity, intentType: record.intentType, key: record.key)
                        keyRecords[at] = nil
                        keyRecordIndex[id] = nil
                        deleteKeyRecord(id)
                    }
                case .conversation(let conversation):
                    let id = ConversationID(scope: conversation.scope, id: conversation.id)
                    if let at = conversationIndex[id] { conversations[at] = nil }
                    conversationIndex[id] = conversations.count
                    conversations.append(conversation)
                case .conversationRemoved(let scope, let id):
                    let id = ConversationID(scope: scope, id: id)
                    if let at = conversationIndex.removeValue(forKey: id) { conversations[at] = nil }
                    if conversationDeletes.insert(id).inserted { conversationDeleteOrder.append(id) }
                }
            }

            /// A request id used by an operation other than `accepted`: an id that ended in this segment starts a new one
            /// (where the statements find it gone, as the operation would have).
            private mutating func use(_ id: UInt64) {
                if endedIDs.contains(id) { finishSegment() }
                if !acceptedIDs.contains(id) { usedIDs.insert(id) }
            }

            private mutating func attach(_ listener: Listener) {
                listenerIndexes[listener, default: []].append(listeners.count)
                listeners.append(listener)
            }

            private mutating func detach(_ listener: Listener) {
                for at in listenerIndexes.removeValue(forKey: listener) ?? [] { listeners[at] = nil }
                if listenerDeletes.insert(listener).inserted { listenerDeleteOrder.append(listener) }
            }

            private mutating func store(_ result: JournalResult) {
                if let at = resultIndex[result.key] { results[at] = nil }
                resultIndex[result.key] = results.count
                results.append(result)
            }

            private mutating func deleteKeyRecord(_ id: KeyRecordID) {
                if keyRecordDeletes.insert(id).inserted { keyRecordDeleteOrder.append(id) }
            }

            /// Closes the segment being built (if it holds anything) and starts an empty one.
            mutating func finishSegment() {
                let segment = Segment(
                    accepted: accepted, listenerDeletes: listenerDeleteOrder,
                    listenerInserts: listeners.compactMap { $0 },
                    dispatched: dispatched, ended: ended, resultsExpireBefore: resultsExpireBefore,
                    resultDeletes: resultDeleteOrder, results: results.compactMap { $0 },
                    keyRecordsExpireBefore: keyRecordsExpireBefore, keyRecordDeletes: keyRecordDeleteOrder,
                    keyRecords: keyRecords.compactMap { $0 }, conversationDeletes: conversationDeleteOrder,
                    conversations: conversations.compactMap { $0 })
                if !segment.isEmpty { segments.append(segment) }
                self = Builder(segments: segments)
            }
        }
    }

    extension PostgresJournalBatch.Segment {
        /// Whether the segment writes nothing.
        var isEmpty: Bool {
            accepted.isEmpty && listenerDeletes.isEmpty && listenerInserts.isEmpty && dispatched.isEmpty
                && ended.isEmpty
                && resultsExpireBefore == nil && resultDeletes.isEmpty && results.isEmpty
                && keyRecordsExpireBefore == nil
                && keyRecordDeletes.isEmpty && keyRecords.isEmpty && conversationDeletes.isEmpty
                && conversations.isEmpty
        }
    }
#endif  // PostgreSQL
