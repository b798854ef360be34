public import ConciergeJSON

/// An intent definition as a `CIPW04` worker announces it in READY (`Schemas/PROTOCOL.md` section 5.16): the
/// definition file's JSON object (section 11.11), its digest, and its version.
public struct AnnouncedDefinition: Sendable, Hashable {
    /// The definition, parsed.
    public let json: JSONValue
    /// `sha256:` and the SHA-256 of the definition's canonical form (compact JSON, object keys sorted by their UTF-8
    /// bytes: ``JSONValue/serialized()``), in lowercase hexadecimal. Two definitions that differ only in key order or
    /// white space have the same digest.
    public let digest: String
    /// The definition's `version` (1 when it has none): a broker that allows rolling upgrades takes a worker whose
    /// definition of a type differs from the one served only under another version (section 5.16).
    public let version: Int

    /// The largest definition frame a broker takes.
    public static let maxSize = 65_536

    /// Reads a definition frame for intent type `intentType`.
    /// - Throws: what is wrong, as the end of a sentence about the definition ("is not JSON …"): not JSON, not an
    ///   object, `intent` not the type, a bad `version`.
    public init(frame: [UInt8], intentType: String) throws(AnnouncedDefinitionError) {
        guard frame.count <= Self.maxSize else {
            throw AnnouncedDefinitionError("is larger than \(Self.maxSize) bytes")
        }
        let json: JSONValue
        do {
            json = try JSONValue.parse(frame)
        } catch {
            throw AnnouncedDefinitionError("is not JSON (\(error.code) at byte \(error.offset))")
        }
        guard json.objectValue != nil else {
            throw AnnouncedDefinitionError("is not a JSON object")
        }
        guard json["intent"]?.stringValue == intentType else {
            throw AnnouncedDefinitionError("does not define \"intent\" as the type before it")
        }
        var version = 1
        if let member = json["version"] {
            guard let number = member.intValue, number >= 1, number <= Int(Int32.max) else {
                throw AnnouncedDefinitionError("has a \"version\" that is not a whole number from 1")
            }
            version = number
        }
        self.init(json: json, version: version)
    }

    /// A definition from its parsed JSON (the digest is computed from it).
    public init(json: JSONValue, version: Int) {
        self.json = json
        self.version = version
        self.digest = SHA256.digestString(json.serialized())
    }

    /// The first 12 hexadecimal digits of the digest, for tables and logs.
    public var shortDigest: String { String(digest.dropFirst("sha256:".count).prefix(12)) }
}

/// A definition frame that cannot be read.
public struct AnnouncedDefinitionError: Error, Sendable, Hashable, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
