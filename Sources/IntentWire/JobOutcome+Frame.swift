extension JobOutcome {
    /// Parses an outcome frame as a broker must (section 5.3): `continue`, `error`, `cancelled` (version 02), and
    /// `stop` for any other word.
    public init(frame: UnsafeRawBufferPointer) {
        if Self.continue.name.matches(frame) {
            self = .continue
        } else if Self.error.name.matches(frame) {
            self = .error
        } else if Self.cancelled.name.matches(frame) {
            self = .cancelled
        } else {
            self = .stop
        }
    }
}
