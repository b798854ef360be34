/// A value the encoders write as one frame of its bytes: byte arrays, strings (UTF-8), literals, borrowed views, and
/// 8-byte words (``WireWord``). The encoders take these generically, so each caller passes what it holds (the
/// broker byte arrays, the client strings, the load client its 8-byte request numbers) without converting it.
public protocol WireBytes {
    /// Appends this value as one frame of `sink`; see ``WireSink/append(_:more:)``.
    func append<Sink: WireSink>(to sink: inout Sink, more: Bool) throws(Sink.Failure) -> Bool
}

extension Array: WireBytes where Element == UInt8 {
    @inlinable
    public func append<Sink: WireSink>(to sink: inout Sink, more: Bool) throws(Sink.Failure) -> Bool {
        try sink.append(self, more: more)
    }
}

extension String: WireBytes {
    @inlinable
    public func append<Sink: WireSink>(to sink: inout Sink, more: Bool) throws(Sink.Failure) -> Bool {
        try sink.append(self, more: more)
    }
}

extension StaticString: WireBytes {
    @inlinable
    public func append<Sink: WireSink>(to sink: inout Sink, more: Bool) throws(Sink.Failure) -> Bool {
        try sink.append(self, more: more)
    }
}

extension UnsafeRawBufferPointer: WireBytes {
    @inlinable
    public func append<Sink: WireSink>(to sink: inout Sink, more: Bool) throws(Sink.Failure) -> Bool {
        try sink.append(self, more: more)
    }
}

/// Eight bytes written as they lie in memory (host byte order): a job id the broker keeps as a `UInt64`, or a
/// request id the load client numbers. Read back with `loadUnaligned(as: UInt64.self)`.
@frozen
public struct WireWord: WireBytes, Sendable, Hashable {
    /// The word.
    public var value: UInt64

    /// The frame of `value`'s 8 bytes.
    @inlinable
    public init(_ value: UInt64) { self.value = value }

    @inlinable
    public func append<Sink: WireSink>(to sink: inout Sink, more: Bool) throws(Sink.Failure) -> Bool {
        var value = value
        return try withUnsafeBytes(of: &value) { raw throws(Sink.Failure) -> Bool in try sink.append(raw, more: more) }
    }
}
