/// How a client names one request: its routing id, its request id and the protocol version it spoke.
///
/// A result is stored under this key, so STATUS finds it; a duplicate attached to an accepted request is listed
/// by it.
public struct JournalRequestKey: Sendable, Hashable {
    /// The client's routing id.
    public var client: [UInt8]
    /// The client's request id.
    public var requestID: [UInt8]
    /// The client protocol version of the request (1 or 2).
    public var version: UInt8

    public init(client: [UInt8], requestID: [UInt8], version: UInt8) {
        self.client = client
        self.requestID = requestID
        self.version = version
    }
}
