/// The frames of one CIP message as the decoders read them: borrowed views of the frames' bytes, F0 first (the
/// routing-id frame a ROUTER socket adds is not part of it).
///
/// The views are valid only as long as the memory they point into (for a received message, until the next receive
/// into the same buffer); a decoder copies out what it keeps. A receiver that keeps only the first frames of a long
/// message (`ZMQMultipart` keeps a fixed number) says how many it dropped, so that a decoder can tell a
/// message that is too long from one that fits.
public struct WireFrames {
    /// The frames received, in order.
    public let views: UnsafeBufferPointer<UnsafeRawBufferPointer>
    /// Frames the receiver dropped after the last one in ``views``.
    public let dropped: Int

    /// Frames over `views`; `dropped` frames followed them and were not kept.
    public init(_ views: UnsafeBufferPointer<UnsafeRawBufferPointer>, dropped: Int = 0) {
        self.views = views
        self.dropped = max(0, dropped)
    }

    /// The number of frames of the message, dropped ones included.
    @inlinable public var count: Int { views.count + dropped }

    /// The bytes of frame `index` (`index < views.count`).
    @inlinable public subscript(index: Int) -> UnsafeRawBufferPointer { views[index] }

    /// Calls `body` with views of `frames` (tests, fuzz targets, cold paths: the frames are copied once into one
    /// buffer).
    public static func withFrames<R>(_ frames: [[UInt8]], dropped: Int = 0, _ body: (WireFrames) -> R) -> R {
        var storage: [UInt8] = []
        storage.reserveCapacity(frames.reduce(0) { $0 + $1.count })
        var bounds: [Range<Int>] = []
        bounds.reserveCapacity(frames.count)
        for frame in frames {
            bounds.append(storage.count..<storage.count + frame.count)
            storage.append(contentsOf: frame)
        }
        return storage.withUnsafeBytes { raw in
            let views = bounds.map { UnsafeRawBufferPointer(rebasing: raw[$0]) }
            return views.withUnsafeBufferPointer { body(WireFrames($0, dropped: dropped)) }
        }
    }
}
