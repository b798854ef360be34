/// The members of a JSON object: unique keys, each with a value, kept in the order they were added.
///
/// Its API is a dictionary's (subscripts, `keys`, `values`, `removeValue(forKey:)`, `mapValues`, dictionary literals,
/// order-independent equality and hashing), but small objects keep their members in one array and find a key by
/// comparing, not hashing. The bodies of the protocol are many small objects (an Interaction, its intent, its
/// parameters), each read a few times; a dictionary hashed every key when it was built and again on every lookup,
/// and looked up its generic storage's metadata at run time, for about a fifth of a worker's instructions per job.
/// An object with more than ``indexThreshold`` members also keeps a hash index, so that nothing becomes quadratic.
///
/// Iteration and ``keys`` follow the members' order (insertion, or document order after parsing); serialization
/// sorts keys by their UTF-8 bytes whatever the order. Keys are Swift `String`s, compared as Swift compares them:
/// canonically equivalent keys are the same key.
public struct JSONObject: Sendable {
    /// A member: a key and its value.
    public typealias Element = (key: String, value: JSONValue)

    /// A member as stored: a struct, not a tuple, so that arrays of members need no tuple metadata at run time.
    @usableFromInline struct Member: Sendable {
        @usableFromInline var key: String
        @usableFromInline var value: JSONValue

        @usableFromInline init(key: String, value: JSONValue) {
            self.key = key
            self.value = value
        }
    }

    /// Members in order.
    @usableFromInline var members: [Member]
    /// Each key's position in ``members``, kept once there are more than ``indexThreshold`` members.
    @usableFromInline var index: [String: Int]?

    /// Above this many members an object keeps a hash index of its keys.
    public static let indexThreshold = 12

    /// An empty object.
    @inlinable public init() {
        members = []
        index = nil
    }

    /// An empty object with room for `minimumCapacity` members.
    public init(minimumCapacity: Int) {
        members = []
        members.reserveCapacity(minimumCapacity)
        index = nil
    }

    /// The members of `dictionary`, in its iteration order.
    public init(_ dictionary: [String: JSONValue]) {
        members = dictionary.map { Member(key: $0.key, value: $0.value) }
        index = nil
        buildIndexIfNeeded()
    }

    /// Members from key-value pairs; a duplicated key keeps its last value, in its first position.
    public init<S: Sequence>(_ pairs: S) where S.Element == (String, JSONValue) {
        self.init()
        for (key, value) in pairs { self[key] = value }
    }

    /// The number of members.
    @inlinable public var count: Int { members.count }

    /// Whether the object has no members.
    @inlinable public var isEmpty: Bool { members.isEmpty }

    /// The keys, in the members' order (a new array: on a hot path, iterate the object instead).
    public var keys: [String] { members.map(\.key) }

    /// The values, in the members' order (a new array: on a hot path, iterate the object instead).
    public var values: [JSONValue] { members.map(\.value) }

    /// The members as a Swift dictionary.
    public var dictionary: [String: JSONValue] {
        Dictionary(members.map { ($0.key, $0.value) }, uniquingKeysWith: { _, last in last })
    }

    /// The position of `key` in ``members``.
    @usableFromInline func position(of key: String) -> Int? {
        if let index { return index[key] }
        for position in members.indices where members[position].key == key { return position }
        return nil
    }

    /// The value of `key`, or nil; setting nil removes the member, setting a value replaces it in place or appends it.
    public subscript(key: String) -> JSONValue? {
        get { position(of: key).map { members[$0].value } }
        set {
            if let newValue {
                updateValue(newValue, forKey: key)
            } else {
                removeValue(forKey: key)
            }
        }
    }

    /// The value of `key`, or `defaultValue`.
    public subscript(key: String, default defaultValue: @autoclosure () -> JSONValue) -> JSONValue {
        self[key] ?? defaultValue()
    }

    /// Sets `value` for `key`, in place if the key is there (returning its old value), else as a new last member.
    @discardableResult
    public mutating func updateValue(_ value: JSONValue, forKey key: String) -> JSONValue? {
        if let position = position(of: key) {
            let old = members[position].value
            members[position].value = value
            return old
        }
        members.append(Member(key: key, value: value))
        if index != nil {
            index![key] = members.count - 1
        } else {
            buildIndexIfNeeded()
        }
        return nil
    }

    /// Removes the member `key`; returns its value, or nil if there was none.
    @discardableResult
    public mutating func removeValue(forKey key: String) -> JSONValue? {
        guard let position = position(of: key) else { return nil }
        let old = members.remove(at: position).value
        if index != nil {
            index = nil
            buildIndexIfNeeded()
        }
        return old
    }

    /// The object with each value transformed, keys and order kept.
    public func mapValues(_ transform: (JSONValue) throws -> JSONValue) rethrows -> JSONObject {
        var result = self
        for position in result.members.indices {
            result.members[position].value = try transform(members[position].value)
        }
        return result
    }

    /// The members for which `isIncluded` is true, in order.
    public func filter(_ isIncluded: (Element) throws -> Bool) rethrows -> JSONObject {
        var result = JSONObject()
        result.members = try members.filter { try isIncluded((key: $0.key, value: $0.value)) }
        result.buildIndexIfNeeded()
        return result
    }

    /// Adds the members of `other`; for a key both have, `combine` gives the value from this object's and `other`'s.
    public mutating func merge(
        _ other: JSONObject, uniquingKeysWith combine: (JSONValue, JSONValue) throws -> JSONValue
    ) rethrows {
        for member in other.members {
            if let position = position(of: member.key) {
                members[position].value = try combine(members[position].value, member.value)
            } else {
                updateValue(member.value, forKey: member.key)
            }
        }
    }

    @usableFromInline mutating func buildIndexIfNeeded() {
        guard index == nil, members.count > Self.indexThreshold else { return }
        var built = [String: Int](minimumCapacity: members.count)
        for position in members.indices { built[members[position].key] = position }
        index = built
    }
}

extension JSONObject: Sequence {
    /// Iterates the members in order.
    public struct Iterator: IteratorProtocol {
        @usableFromInline var base: IndexingIterator<[Member]>

        @usableFromInline init(base: IndexingIterator<[Member]>) { self.base = base }

        @inlinable public mutating func next() -> Element? {
            guard let member = base.next() else { return nil }
            return (key: member.key, value: member.value)
        }
    }

    @inlinable public func makeIterator() -> Iterator { Iterator(base: members.makeIterator()) }

    public var underestimatedCount: Int { members.count }
}

extension JSONObject: ExpressibleByDictionaryLiteral {
    /// Members from a literal; as when parsing, a duplicated key keeps its last value.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self.init(minimumCapacity: elements.count)
        for (key, value) in elements { self[key] = value }
    }
}

extension JSONObject: Hashable {
    /// Equal when both have the same keys with equal values, in any order.
    public static func == (left: JSONObject, right: JSONObject) -> Bool {
        guard left.members.count == right.members.count else { return false }
        for member in left.members {
            guard let value = right[member.key], value == member.value else { return false }
        }
        return true
    }

    /// Independent of the members' order, as equality is.
    public func hash(into hasher: inout Hasher) {
        var combined = 0
        for member in members {
            var single = Hasher()
            single.combine(member.key)
            single.combine(member.value)
            combined ^= single.finalize()
        }
        hasher.combine(members.count)
        hasher.combine(combined)
    }
}

extension JSONObject: CustomStringConvertible {
    /// The compact JSON text of the object.
    public var description: String { JSONValue.object(self).serializedString() }
}
