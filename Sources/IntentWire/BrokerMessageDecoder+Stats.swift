extension BrokerMessageDecoder {
    /// The body of an answer to a STATS query (`Schemas/PROTOCOL.md` section 5.14): `[CIPW0v, STATS, body]` of
    /// version 2 or later; nil for any other message.
    public func statsAnswer(_ frames: WireFrames) -> UnsafeRawBufferPointer? {
        guard frames.count == 3, frames.dropped == 0,
            (WorkerMessageDecoder.version(ofSignature: frames[0]) ?? 1) >= 2, CIP.Worker.stats.matches(frames[1])
        else { return nil }
        return frames[2]
    }

    /// ``statsAnswer(_:)`` for a message given as byte arrays: a copy of the body.
    public func statsAnswer(_ frames: [[UInt8]]) -> [UInt8]? {
        WireFrames.withFrames(frames) { frames in statsAnswer(frames).map { Array($0) } }
    }
}
