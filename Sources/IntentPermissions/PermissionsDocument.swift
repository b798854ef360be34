import ConciergeJSON
import IntentVocabulary

/// Reads a permissions document's JSON into ``Permissions``, checking it as
/// `Schemas/json/permissions.schema.json` does and naming the place of the first thing wrong.
struct PermissionsDocument {
    let root: JSONValue

    init(_ root: JSONValue) { self.root = root }

    /// The name and key rules: a name of 1 to 64 characters of `[A-Za-z0-9_.-]`; a key of 40 Z85 characters.
    static let keyLength = 40
    static let z85Alphabet = Set(
        "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#".utf8)

    func permissions() throws(PermissionsError) -> Permissions {
        guard let top = root.objectValue else { throw Self.fail("", "must be an object") }
        try Self.onlyKeys(top, ["version", "identities"], at: "")
        guard top["version"]?.intValue == 1 else { throw Self.fail("version", "must be 1") }
        guard let identities = top["identities"]?.objectValue else {
            throw Self.fail("identities", "must be an object of identities by name")
        }
        var list: [PermissionIdentity] = []
        var names = Set<String>()
        for (name, value) in identities {
            guard names.insert(name).inserted else { throw Self.fail("identities", "name \"\(name)\" twice") }
            list.append(try Self.identity(name, value))
        }
        return try Permissions(identities: list)
    }

    private static func identity(_ name: String, _ value: JSONValue) throws(PermissionsError) -> PermissionIdentity {
        let at = "identities.\(name)"
        guard (1...64).contains(name.utf8.count), name.utf8.allSatisfy(IntentTypeName.isValidByte) else {
            throw fail(at, "an identity's name is 1 to 64 characters of A-Z, a-z, 0-9, '_', '.' and '-'")
        }
        guard let object = value.objectValue else { throw fail(at, "must be an object") }
        try onlyKeys(object, ["keys", "send", "serve", "description"], at: at)
        if let description = object["description"], description.stringValue == nil {
            throw fail("\(at).description", "must be a string")
        }
        // No keys: an identity known only by the HTTP gateway's bearer tokens (`concierge gateway --permissions`).
        let keys = object["keys"]?.arrayValue ?? []
        if object["keys"] != nil, object["keys"]?.arrayValue == nil {
            throw fail("\(at).keys", "must be a list of CURVE public keys (40 characters of Z85)")
        }
        var texts: [String] = []
        for (index, key) in keys.enumerated() {
            guard let text = key.stringValue, text.utf8.count == keyLength, text.utf8.allSatisfy(z85Alphabet.contains)
            else {
                throw fail("\(at).keys[\(index)]", "must be a CURVE public key: 40 characters of Z85")
            }
            texts.append(text)
        }
        return PermissionIdentity(
            name: name, keys: texts, send: try list(object["send"], at: "\(at).send"),
            serve: try list(object["serve"], at: "\(at).serve"))
    }

    private static func list(_ value: JSONValue?, at: String) throws(PermissionsError) -> AccessList {
        guard let value else { return .none }
        guard let object = value.objectValue else { throw fail(at, "must be an object with \"allow\" and \"deny\"") }
        try onlyKeys(object, ["allow", "deny"], at: at)
        return AccessList(
            allow: try patterns(object["allow"], at: "\(at).allow"),
            deny: try patterns(object["deny"], at: "\(at).deny"))
    }

    private static func patterns(_ value: JSONValue?, at: String) throws(PermissionsError) -> [IntentPattern] {
        guard let value else { return [] }
        guard let entries = value.arrayValue else { throw fail(at, "must be an array of intent type patterns") }
        var patterns: [IntentPattern] = []
        for (index, entry) in entries.enumerated() {
            guard let text = entry.stringValue else { throw fail("\(at)[\(index)]", "must be a string") }
            do {
                patterns.append(try IntentPattern(parsing: text))
            } catch {
                throw fail("\(at)[\(index)]", "\"\(text)\": \(error.message)")
            }
        }
        return patterns
    }

    private static func onlyKeys(_ object: JSONObject, _ allowed: Set<String>, at: String) throws(PermissionsError) {
        var seen = Set<String>()
        for key in object.keys {
            guard allowed.contains(key) else {
                throw fail(at, "unknown key \"\(key)\" (allowed: \(allowed.sorted().joined(separator: ", ")))")
            }
            guard seen.insert(key).inserted else { throw fail(at, "the key \"\(key)\" appears twice") }
        }
    }

    private static func fail(_ at: String, _ message: String) -> PermissionsError {
        PermissionsError(code: .malformed, message: at.isEmpty ? "the document \(message)" : "\(at) \(message)")
    }
}
