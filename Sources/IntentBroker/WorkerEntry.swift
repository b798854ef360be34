/// A registered worker as the broker sees it.
final class WorkerEntry {
    let routingID: [UInt8]
    let name: String
    let capacity: Int
    let intentTypes: [Int]
    /// Jobs given and not yet answered, by job id.
    var jobs: [UInt64: PendingRequest] = [:]
    var draining = false
    /// When the worker is declared dead unless it is heard from.
    var expiry: UInt64
    var removed = false
    /// Its send queue was full at the last dispatch; set back when it is heard from.
    var blocked = false

    init(routingID: [UInt8], name: String, capacity: Int, intentTypes: [Int], expiry: UInt64) {
        self.routingID = routingID
        self.name = name
        self.capacity = capacity
        self.intentTypes = intentTypes
        self.expiry = expiry
    }

    var load: Int { jobs.count }
    var hasRoom: Bool { !draining && !removed && !blocked && jobs.count < capacity }
}
