/// The conversations the broker carries (`Schemas/PROTOCOL.md` section 4.11), with their bounds: a count and a
/// memory budget for new ones, an idle time to live for those that wait for their caller, and the result TTL for
/// ended ones (kept so that a retried last turn is answered again).
struct ConversationStore {
    private(set) var conversations: [ConversationKey: Conversation] = [:]
    /// What the conversations cost together (``Conversation/cost``).
    private(set) var bytes = 0
    private var costs: [ConversationKey: Int] = [:]
    let ttl: UInt64
    let endedTTL: UInt64
    let capacity: Int
    let byteBudget: Int

    init(ttl: UInt64, endedTTL: UInt64, capacity: Int, byteBudget: Int) {
        self.ttl = ttl
        self.endedTTL = endedTTL
        self.capacity = capacity
        self.byteBudget = byteBudget
    }

    var count: Int { conversations.count }

    /// Conversations that have not ended.
    var openCount: Int { conversations.values.count { $0.state != .ended } }

    subscript(key: ConversationKey) -> Conversation? { conversations[key] }

    /// Whether a new conversation fits the bounds.
    var hasRoom: Bool { conversations.count < capacity && bytes < byteBudget }

    /// Stores `conversation` (new or changed) and charges its cost.
    mutating func store(_ conversation: Conversation) {
        let cost = conversation.cost
        bytes += cost - (costs[conversation.key] ?? 0)
        costs[conversation.key] = cost
        conversations[conversation.key] = conversation
    }

    /// Changes the stored conversation in place (and charges its new cost).
    mutating func update(_ key: ConversationKey, _ change: (inout Conversation) -> Void) {
        guard var conversation = conversations[key] else { return }
        change(&conversation)
        store(conversation)
    }

    mutating func remove(_ key: ConversationKey) {
        conversations.removeValue(forKey: key)
        bytes -= costs.removeValue(forKey: key) ?? 0
    }

    /// The conversations that waited for their caller longer than the time to live (to end `expired`), and the ended
    /// ones kept longer than the result TTL (to forget), oldest first.
    func due(now: UInt64) -> (expired: [ConversationKey], forgotten: [ConversationKey]) {
        var expired: [(UInt64, ConversationKey)] = []
        var forgotten: [(UInt64, ConversationKey)] = []
        for (key, conversation) in conversations {
            switch conversation.state {
            case .asking, .confirming:
                if now &- conversation.idleSince >= ttl { expired.append((conversation.idleSince, key)) }
            case .ended:
                let at = conversation.endedAt ?? conversation.idleSince
                if now &- at >= endedTTL { forgotten.append((at, key)) }
            case .running:
                break
            }
        }
        return (expired.sorted { $0.0 < $1.0 }.map(\.1), forgotten.sorted { $0.0 < $1.0 }.map(\.1))
    }
}
