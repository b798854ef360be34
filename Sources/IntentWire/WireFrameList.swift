/// A ``WireSink`` in memory: the frames of encoded messages as byte arrays, for tests, fuzz targets and tools.
///
/// Its ``WireSink/Body`` is a byte array, so `decode(encode(x))` can be checked with the decoders' byte-array
/// entry points: `try ClientMessageDecoder().decode(list.frames)`.
public struct WireFrameList: WireSink, Sendable, Hashable {
    /// The frames appended, in order (all messages appended, one after the other).
    public var frames: [[UInt8]]
    /// Where each message ends: the indices in ``frames`` after the frames appended with `more: false`.
    public var messageEnds: [Int]

    /// An empty list.
    public init() {
        frames = []
        messageEnds = []
    }

    public mutating func append(_ bytes: UnsafeRawBufferPointer, more: Bool) -> Bool {
        frames.append(Array(bytes))
        if !more { messageEnds.append(frames.count) }
        return true
    }

    public mutating func append(body: [UInt8], more: Bool) -> Bool {
        frames.append(body)
        if !more { messageEnds.append(frames.count) }
        return true
    }

    /// The complete messages appended, each as its frames.
    public var messages: [[[UInt8]]] {
        var start = 0
        return messageEnds.map { end in
            defer { start = end }
            return Array(frames[start..<end])
        }
    }
}
