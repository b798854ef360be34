/// A registered worker as the broker sees it (section 6.5 of the protocol).
///
/// A class, like ``BrokerRequest``: picking a worker reads several workers' records per job, and a struct record
/// (with its job table and arrays) was copied out of the table for each read. Only the broker's loop thread touches
/// one, so its variables skip the run-time exclusivity checks, as ``BrokerRequest``'s do.
final class WorkerRecord {
    let id: WorkerID
    let routingID: [UInt8]
    let name: String
    let capacity: Int
    /// The intent types it announced (indices into the broker's type table), in order, no repeats.
    let intentTypes: [Int]
    /// Its CIP/Worker version (READY's signature): 2 gets keys, attempts and CANCEL (PROTOCOL.md 5.13).
    let version: UInt8
    /// Its CURVE public key as the ZAP handler gave it (empty without CURVE): what its permissions are looked up by.
    let identity: [UInt8]
    /// Jobs sent (or booked to be sent) and not yet answered: job id -> request. A request may have ended meanwhile
    /// (hard limit): the slot stays taken until the worker answers, as section 6.3 says.
    @exclusivity(unchecked) var jobs: [SerialKey: RequestID] = [:]
    /// It sent DRAIN: no more jobs.
    @exclusivity(unchecked) var draining = false
    /// Its send queue was full at the last dispatch; cleared when it is heard from.
    @exclusivity(unchecked) var blocked = false
    /// When it is declared dead unless heard from.
    @exclusivity(unchecked) var expiry: UInt64
    /// The job of a suspect request (one whose earlier worker was lost while running it, section 6.7) that this
    /// worker runs: while it is held, the worker gets no other job, so that if it dies too the blame is certain.
    @exclusivity(unchecked) var isolatedJob: UInt64?
    /// Version 04: the digest of the definition it announced, by intent type index (section 5.16).
    var definitionDigests: [Int: String] = [:]

    init(
        id: WorkerID, routingID: [UInt8], name: String, capacity: Int, intentTypes: [Int], version: UInt8 = 1,
        expiry: UInt64, identity: [UInt8] = []
    ) {
        self.id = id
        self.identity = identity
        self.version = version
        self.routingID = routingID
        self.name = name
        self.capacity = capacity
        self.intentTypes = intentTypes
        self.expiry = expiry
    }

    var load: Int { jobs.count }
    var hasRoom: Bool { !draining && !blocked && jobs.count < capacity && !isIsolating }
    /// Whether it runs a suspect request's job (``isolatedJob``) and so takes no other.
    var isIsolating: Bool {
        guard let job = isolatedJob else { return false }
        return jobs[SerialKey(job)] != nil
    }
}
