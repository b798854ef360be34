import ConciergeJSON
import Testing

@Suite("Splicing")
struct SplicingTests {
    @Test func locatesTheValueOfATopLevelMember() throws {
        let text = #"{ "a" : [1, {"intent": 2}] ,"intent" :  {"type": "Echo"} , "b": null }"#
        let bytes = Array(text.utf8)
        let (value, range) = try JSONValue.parse(bytes, locatingMember: "intent")
        let found = try #require(range)
        #expect(String(decoding: bytes[found], as: UTF8.self) == #"{"type": "Echo"}"#)
        #expect(value == (try JSONValue.parse(text)))
    }

    @Test func locatesTheLastOccurrenceOfADuplicateKeyAsParsingKeepsIt() throws {
        let bytes = Array(#"{"intent":1,"intent":"two"}"#.utf8)
        let (value, range) = try JSONValue.parse(bytes, locatingMember: "intent")
        #expect(String(decoding: bytes[try #require(range)], as: UTF8.self) == #""two""#)
        #expect(value["intent"] == "two")
    }

    @Test func locatesNothingInsideNestedObjectsOrNonObjects() throws {
        #expect(try JSONValue.parse(Array(#"{"x":{"intent":1}}"#.utf8), locatingMember: "intent").memberRange == nil)
        #expect(try JSONValue.parse(Array(#"[{"intent":1}]"#.utf8), locatingMember: "intent").memberRange == nil)
        #expect(throws: JSONError.self) { try JSONValue.parse(Array(#"{"intent":}"#.utf8), locatingMember: "intent") }
    }

    @Test func appendsAMemberBeforeTheClosingBrace() throws {
        let write: (inout [UInt8]) -> Void = { JSONValue.object(["n": 1]).write(into: &$0) }
        let spliced = try #require(JSONValue.appendingMember("k", to: Array(#" {"a":"}"} "#.utf8), writeValue: write))
        #expect(String(decoding: spliced, as: UTF8.self) == #" {"a":"}","k":{"n":1}}"#)
        let intoEmpty = try #require(JSONValue.appendingMember("k\"", to: Array("{ }".utf8), writeValue: write))
        #expect(String(decoding: intoEmpty, as: UTF8.self) == #"{"k\"":{"n":1}}"#)
        #expect(try JSONValue.parse(intoEmpty) == ["k\"": ["n": 1]])
    }

    @Test func refusesDocumentsThatAreNotObjects() {
        let write: (inout [UInt8]) -> Void = { $0.append(UInt8(ascii: "1")) }
        #expect(JSONValue.appendingMember("k", to: Array("[1]".utf8), writeValue: write) == nil)
        #expect(JSONValue.appendingMember("k", to: Array("}".utf8), writeValue: write) == nil)
        #expect(JSONValue.appendingMember("k", to: [], writeValue: write) == nil)
    }
}
