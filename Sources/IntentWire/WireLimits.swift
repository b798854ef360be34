/// The limits the decoders check frames against (`Schemas/PROTOCOL.md` sections 3.3, 4.8 and 5.12).
public struct WireLimits: Sendable, Hashable {
    /// The most frames a message may have, F0 included (the routing-id frame is not counted). A longer message
    /// fails the first check (`malformed`). The default, 64, leaves a READY room for 60 intent types.
    public var maxFrames: Int
    /// The largest REQUEST body, in bytes; a larger one gets `too-large`.
    public var maxBodySize: Int
    /// The broker's hard limit in whole milliseconds: a REQUEST deadline above min(60000, this) gets
    /// `bad-deadline`.
    public var hardLimitMilliseconds: Int

    /// Limits with the protocol's defaults (section 14).
    public init(maxFrames: Int = 64, maxBodySize: Int = 1 << 20, hardLimitMilliseconds: Int = 60_000) {
        self.maxFrames = maxFrames
        self.maxBodySize = maxBodySize
        self.hardLimitMilliseconds = hardLimitMilliseconds
    }

    /// The largest deadline a REQUEST may ask for, in milliseconds: min(60000, the hard limit).
    public var maxDeadlineMilliseconds: Int { min(CIP.deadlineBounds.upperBound, hardLimitMilliseconds) }
}
