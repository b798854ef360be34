/// A READY whose frames passed check 3 of `Schemas/PROTOCOL.md` section 5.12.
public struct WorkerReady: Sendable, Hashable {
    /// F2: how many jobs the worker runs at once, 1...1000.
    public let capacity: Int
    /// F3: the worker's name, 1...255 bytes of UTF-8 not beginning with a zero byte.
    public let name: [UInt8]
    /// F4...: the intent types served, each 1...255 bytes of UTF-8, in order, repeats left out.
    public let intentTypes: [[UInt8]]
    /// F0: the worker's protocol version, 1 (`CIPW01`) to 4 (`CIPW04`, section 5.16); the broker answers it in it.
    public let version: UInt8
    /// Version 04: the definition of each type in ``intentTypes``, in the same order (empty before version 04).
    public let definitions: [AnnouncedDefinition]

    /// A READY with these fields (the decoder makes them; tests and fuzz targets compare them).
    public init(
        capacity: Int, name: [UInt8], intentTypes: [[UInt8]], version: UInt8 = 1,
        definitions: [AnnouncedDefinition] = []
    ) {
        self.capacity = capacity
        self.name = name
        self.intentTypes = intentTypes
        self.version = version
        self.definitions = definitions
    }

    /// The definition announced for the type at `index` of ``intentTypes``, if any.
    public func definition(at index: Int) -> AnnouncedDefinition? {
        index < definitions.count ? definitions[index] : nil
    }

    /// The name as a string (it is valid UTF-8).
    public var nameString: String { String(decoding: name, as: UTF8.self) }
}
