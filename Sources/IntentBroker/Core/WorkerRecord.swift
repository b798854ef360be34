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
    /// Jobs sent (or booked to be sent) and not yet answered: job id -> request. A request may have ended meanwhile
    /// (hard limit): the slot stays taken until the worker answers, as section 6.3 says.
    @exclusivity(unchecked) var jobs: [SerialKey: RequestID] = [:]
    /// It sent DRAIN: no more jobs.
    @exclusivity(unchecked) var draining = false
    /// Its send queue was full at the last dispatch; cleared when it is heard from.
    @exclusivity(unchecked) var blocked = false
    /// When it is declared dead unless heard from.
    @exclusivity(unchecked) var expiry: UInt64

    init(
        id: WorkerID, routingID: [UInt8], name: String, capacity: Int, intentTypes: [Int], version: UInt8 = 1,
        expiry: UInt64
    ) {
        self.id = id
        self.version = version
        self.routingID = routingID
        self.name = name
        self.capacity = capacity
        self.intentTypes = intentTypes
        self.expiry = expiry
    }

    var load: Int { jobs.count }
    var hasRoom: Bool { !draining && !blocked && jobs.count < capacity }
}
