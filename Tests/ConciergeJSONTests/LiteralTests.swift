import ConciergeJSON
import Testing

@Suite("Literals")
struct LiteralTests {
    @Test func scalarLiteralsBuildMatchingCases() {
        let null: JSONValue = nil
        let bool: JSONValue = true
        let int: JSONValue = -12
        let double: JSONValue = 1.5
        let string: JSONValue = "text"
        #expect(null == .null)
        #expect(bool == .bool(true))
        #expect(int == .int(-12))
        #expect(double == .double(1.5))
        #expect(string == .string("text"))
    }

    @Test func integerLiteralIsIntAndFloatLiteralIsDouble() {
        let integral: JSONValue = 1.0
        let whole: JSONValue = 1
        #expect(integral == .double(1))
        #expect(whole == .int(1))
        #expect(integral != whole)
    }

    @Test func collectionLiteralsNest() {
        let value: JSONValue = ["list": [1, "two", nil, [3.0]], "flag": false]
        #expect(
            value
                == .object([
                    "list": .array([.int(1), .string("two"), .null, .array([.double(3)])]),
                    "flag": .bool(false),
                ]))
        let empty: JSONValue = [:]
        let emptyArray: JSONValue = []
        #expect(empty == .object([:]))
        #expect(emptyArray == .array([]))
    }

    @Test func dictionaryLiteralWithDuplicateKeysKeepsTheLastValue() {
        let value: JSONValue = ["a": 1, "a": 2]
        #expect(value == .object(["a": .int(2)]))
    }
}
