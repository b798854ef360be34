extension RequestPhase {
    /// Parses a phase frame.
    public init?(frame: UnsafeRawBufferPointer) {
        guard let phase = Self.allCases.first(where: { $0.name.matches(frame) }) else { return nil }
        self = phase
    }
}
