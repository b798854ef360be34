import ConciergeJSON
import PropertyBased
import Testing

/// `JSONObject` keeps small objects in an array and large ones with a hash index; these tests hold both to what a
/// Swift dictionary does, and check what the array adds: the members' order.
@Suite("JSON objects")
struct JSONObjectTests {
    /// A random sequence of operations on a key space of 40 keys (so that objects grow past the index threshold and
    /// shrink under it), applied to a `JSONObject` and to a dictionary; after each, both hold the same members, and
    /// the object's keys are in the order they were first added.
    @Test func operationsAgreeWithADictionary() async {
        await propertyCheck(count: 300, input: Gen.int(in: 0...9_999).array(of: 1...300)) { steps in
            var object = JSONObject()
            var model: [String: JSONValue] = [:]
            var order: [String] = []
            for step in steps {
                let key = "k\(step % 40)"
                let value = JSONValue.int(Int64(step))
                switch step % 5 {
                case 0, 1:
                    object[key] = value
                    if model.updateValue(value, forKey: key) == nil { order.append(key) }
                case 2:
                    #expect(object.removeValue(forKey: key) == model.removeValue(forKey: key))
                    order.removeAll { $0 == key }
                case 3:
                    #expect(object.updateValue(value, forKey: key) == model.updateValue(value, forKey: key))
                    if !order.contains(key) { order.append(key) }
                default:
                    #expect(object[key] == model[key])
                }
                #expect(object.count == model.count)
                #expect(object.keys == order)
            }
            for (key, value) in model { #expect(object[key] == value) }
            #expect(object.dictionary == model)
            #expect(JSONObject(model) == object)
            #expect(JSONObject(model).hashValue == object.hashValue)
        }
    }

    @Test func equalityAndHashingIgnoreOrder() {
        let forward: JSONObject = ["a": 1, "b": [1, 2], "c": ["d": nil]]
        let backward: JSONObject = ["c": ["d": nil], "b": [1, 2], "a": 1]
        #expect(forward == backward)
        #expect(forward.hashValue == backward.hashValue)
        #expect(Set([JSONValue.object(forward), .object(backward)]).count == 1)
        #expect(forward != ["a": 1, "b": [1, 2]])
        #expect(forward != ["a": 1, "b": [1, 2], "c": ["d": false]])
        #expect(forward != ["a": 1, "b": [1, 2], "e": ["d": nil]])
    }

    @Test func parsingKeepsDocumentOrderAndTheLastDuplicate() throws {
        let parsed = try JSONValue.parse(#"{"z": 1, "a": 2, "m": 3, "a": 4}"#)
        let object = try #require(parsed.objectValue)
        #expect(object.keys == ["z", "a", "m"])
        #expect(object["a"] == 4)
        #expect(parsed.serializedString() == #"{"a":4,"m":3,"z":1}"#)  // serialization still sorts
    }

    /// Large objects (with the index) parse, look up, replace and remove like small ones, duplicates included.
    @Test(arguments: [3, JSONObject.indexThreshold, JSONObject.indexThreshold + 1, 5_000])
    func objectsOfEverySizeLookUpTheirMembers(size: Int) throws {
        var text = "{"
        for number in 0..<size { text += "\"key\(number)\": \(number), " }
        text += "\"key0\": -1}"  // a duplicate of the first key: the last value wins, in the first place
        var object = try #require(JSONValue.parse(text).objectValue)
        #expect(object.count == size)
        #expect(object["key0"] == -1)
        #expect(object.keys.first == "key0")
        for number in 1..<size { #expect(object["key\(number)"] == .int(Int64(number))) }
        #expect(object["key\(size)"] == nil)
        object["key1"] = "one"
        #expect(object.removeValue(forKey: "key0") == -1)
        #expect(object["key0"] == nil)
        #expect(object["key1"] == "one")
        #expect(object["key\(size - 1)"] == .int(Int64(size - 1)))
        #expect(object.count == size - 1)
    }

    @Test func canonicallyEquivalentKeysAreOneKey() {
        var object: JSONObject = ["caf\u{E9}": 1]
        object["cafe\u{301}"] = 2
        #expect(object.count == 1)
        #expect(object["caf\u{E9}"] == 2)
    }

    @Test func dictionaryLikeOperations() {
        var object: JSONObject = ["a": 1, "b": 2]
        object.merge(["b": 10, "c": 3]) { old, new in .int(Int64((old.intValue ?? 0) + (new.intValue ?? 0))) }
        #expect(object == ["a": 1, "b": 12, "c": 3])
        #expect(object.keys == ["a", "b", "c"])
        #expect(object.mapValues { .string("\($0)") } == ["a": "1", "b": "12", "c": "3"])
        #expect(object.filter { $0.key != "b" } == ["a": 1, "c": 3])
        #expect(object["missing", default: 0] == 0)
        #expect(object.values == [1, 12, 3])
        #expect(object.description == #"{"a":1,"b":12,"c":3}"#)
        #expect(JSONObject([("x", JSONValue.int(1)), ("x", 2)]) == ["x": 2])
    }
}
