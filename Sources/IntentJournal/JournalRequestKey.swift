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
    /// For a duplicate attached to a request: when its own first-reply deadline is acted on (wall-clock Unix
    /// milliseconds), so that after a restart it gets its progress reply at its own time, and none if that passed;
    /// nil elsewhere (results), or for a listener journaled without one (it gets its request's).
    public var actAt: Int64?

    public init(client: [UInt8], requestID: [UInt8], version: UInt8, actAt: Int64? = nil) {
        self.client = client
        self.requestID = requestID
        self.version = version
        self.actAt = actAt
    }
}
