/// A body frame to encode: bytes the sender wrote itself (an error or progress body, a client's request), or a
/// frame the sink holds already (``WireSink/Body``: a worker's result forwarded to the client, a request's body
/// forwarded to a worker), appended without copying its bytes.
@frozen
public enum WirePayload<Body> {
    /// A body the sender wrote.
    case bytes([UInt8])
    /// A body the sink holds as a frame.
    case body(Body)
}

extension WirePayload: Sendable where Body: Sendable {}
