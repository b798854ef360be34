/// Where the encoders of IntentWire write a message's frames, F0 first: a socket that sends them one by one (the
/// ZeroMQ binding's sockets adopt it), or a list of byte arrays in memory (``WireFrameList``, for tests and tools).
///
/// The encoders are generic over the sink and `@inlinable`, so a send through them is specialized for the concrete
/// sink: no existential, no intermediate array, nothing copied that the sink would not copy itself. A body the
/// sink already holds as a frame (``Body``, e.g. a received ZeroMQ message) is appended without copying its bytes.
public protocol WireSink {
    /// A frame the sink can append without copying its bytes (a received message forwarded as a body).
    associatedtype Body
    /// What appending a frame may throw (`Never` for a sink in memory).
    associatedtype Failure: Error

    /// Appends a frame holding a copy of `bytes`; `more`: another frame of the same message follows.
    /// - Returns: false when the sink cannot take the frame now (a socket whose queue is full). A sink may refuse
    ///   only a message's first frame; once that is taken, it takes the rest.
    mutating func append(_ bytes: UnsafeRawBufferPointer, more: Bool) throws(Failure) -> Bool

    /// Appends `body` as a frame without copying its bytes; the same contract as ``append(_:more:)``.
    mutating func append(body: Body, more: Bool) throws(Failure) -> Bool
}

extension WireSink {
    /// Appends a frame holding a literal's bytes (a signature, a command, a status word).
    @inlinable @discardableResult
    public mutating func append(_ literal: StaticString, more: Bool) throws(Failure) -> Bool {
        try append(UnsafeRawBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount), more: more)
    }

    /// Appends a frame holding `bytes`.
    @inlinable @discardableResult
    public mutating func append(_ bytes: [UInt8], more: Bool) throws(Failure) -> Bool {
        try bytes.withUnsafeBytes { raw in Result { () throws(Failure) in try append(raw, more: more) } }.get()
    }

    /// Appends a frame holding `string`'s UTF-8 bytes.
    @inlinable @discardableResult
    public mutating func append(_ string: String, more: Bool) throws(Failure) -> Bool {
        var string = string
        return try string.withUTF8 { utf8 in
            Result { () throws(Failure) in try append(UnsafeRawBufferPointer(utf8), more: more) }
        }.get()
    }

    /// Appends `value` in decimal ASCII digits (`"0"`, `"1250"`), formatted on the stack: no `String` and no
    /// allocation, for the numbers that travel as text frames on hot paths (deadlines, time left, attempts).
    @inlinable @discardableResult
    public mutating func append(decimal value: UInt64, more: Bool) throws(Failure) -> Bool {
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // room for UInt64.max's 20 digits
        return try withUnsafeMutableBytes(of: &digits) { raw throws(Failure) -> Bool in
            var start = raw.count
            var rest = value
            repeat {
                start -= 1
                raw[start] = UInt8(ascii: "0") + UInt8(truncatingIfNeeded: rest % 10)
                rest /= 10
            } while rest > 0
            return try append(UnsafeRawBufferPointer(rebasing: raw[start...]), more: more)
        }
    }

    /// Appends a body frame: bytes the sender wrote, or a ``Body`` the sink holds.
    @inlinable @discardableResult
    public mutating func append(_ payload: WirePayload<Body>, more: Bool) throws(Failure) -> Bool {
        switch payload {
        case .bytes(let bytes): try append(bytes, more: more)
        case .body(let body): try append(body: body, more: more)
        }
    }
}
