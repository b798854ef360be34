import ConciergeJSON
import Testing

@Suite("Parsing valid documents")
struct ParsingTests {
    @Test func parsesLiterals() throws {
        #expect(try JSONValue.parse("null") == .null)
        #expect(try JSONValue.parse("true") == .bool(true))
        #expect(try JSONValue.parse("false") == .bool(false))
    }

    @Test func parsesIntegersAsInt() throws {
        #expect(try JSONValue.parse("0") == .int(0))
        #expect(try JSONValue.parse("42") == .int(42))
        #expect(try JSONValue.parse("-17") == .int(-17))
        #expect(try JSONValue.parse("-0") == .int(0))
    }

    @Test func parsesInt64Extremes() throws {
        #expect(try JSONValue.parse("9223372036854775807") == .int(.max))
        #expect(try JSONValue.parse("-9223372036854775808") == .int(.min))
    }

    @Test func parsesIntegersBeyondInt64AsDouble() throws {
        #expect(try JSONValue.parse("9223372036854775808") == .double(9_223_372_036_854_775_808.0))
        #expect(try JSONValue.parse("-9223372036854775809") == .double(-9_223_372_036_854_775_809.0))
        #expect(try JSONValue.parse("123456789012345678901234567890") == .double(1.2345678901234568e29))
    }

    @Test func parsesFractionsAndExponentsAsDouble() throws {
        #expect(try JSONValue.parse("1.0") == .double(1.0))
        #expect(try JSONValue.parse("1e2") == .double(100.0))
        #expect(try JSONValue.parse("1E+2") == .double(100.0))
        #expect(try JSONValue.parse("25e-2") == .double(0.25))
        #expect(try JSONValue.parse("-2.5") == .double(-2.5))
        #expect(try JSONValue.parse("0.000001") == .double(0.000001))
    }

    @Test func parsesNegativeZeroDoubleWithSign() throws {
        let value = try JSONValue.parse("-0.0")
        #expect(value.doubleValue == 0)
        #expect(value.doubleValue?.sign == .minus)
    }

    @Test(arguments: [
        "0.1", "0.2", "0.30000000000000004", "3.141592653589793", "2.718281828459045",
        "1e22", "1e23", "9007199254740993.0", "9007199254740992.5", "4.9e-324", "5e-324",
        "2.2250738585072011e-308", "2.2250738585072014e-308", "1.7976931348623157e308",
        "123456.789e3", "0.000000000000000000000000000001", "1.00000000000000011102230246251565404236316680908203125",
        "7.0e-10", "12345678901234567890.5", "-1.5e-7", "1e-400",
    ])
    func parsesDoublesCorrectlyRounded(text: String) throws {
        let expected = try #require(Double(text))
        let value = try JSONValue.parse(text)
        guard case .double(let parsed) = value else {
            Issue.record("expected .double, got \(value)")
            return
        }
        #expect(parsed.bitPattern == expected.bitPattern)
    }

    @Test func parsesSimpleStrings() throws {
        #expect(try JSONValue.parse(#""""#) == .string(""))
        #expect(try JSONValue.parse(#""hello world""#) == .string("hello world"))
    }

    @Test func parsesAllSimpleEscapes() throws {
        let value = try JSONValue.parse(#""\"\\\/\b\f\n\r\t""#)
        #expect(value == .string("\"\\/\u{08}\u{0C}\n\r\t"))
    }

    @Test func parsesUnicodeEscapes() throws {
        #expect(try JSONValue.parse(#""\u0041\u00e9\u20AC\u0000""#) == .string("Aé€\u{0}"))
    }

    @Test func parsesSurrogatePairEscapes() throws {
        #expect(try JSONValue.parse(#""\ud83d\ude00""#) == .string("😀"))
        #expect(try JSONValue.parse(#""x\uD834\uDD1Ey""#) == .string("x𝄞y"))
    }

    @Test func parsesRawMultiByteUTF8() throws {
        let text = "\"é € 😀 \u{10FFFF} \u{FFFD}\""
        #expect(try JSONValue.parse(text) == .string("é € 😀 \u{10FFFF} \u{FFFD}"))
    }

    @Test func parsesEscapesMixedWithUTF8AcrossWordBoundaries() throws {
        // Exercise the 8-byte scanning with special bytes at every position.
        for length in 0..<20 {
            for position in 0...length {
                var content = String(repeating: "a", count: length)
                content.insert(contentsOf: "\\n", at: content.index(content.startIndex, offsetBy: position))
                content += "é"
                let value = try JSONValue.parse("\"" + content + "\"")
                var expected = String(repeating: "a", count: length)
                expected.insert("\n", at: expected.index(expected.startIndex, offsetBy: position))
                #expect(value == .string(expected + "é"))
            }
        }
    }

    @Test func parsesArrays() throws {
        #expect(try JSONValue.parse("[]") == .array([]))
        #expect(
            try JSONValue.parse("[1, \"two\", [3.5, null], {}]")
                == .array([.int(1), .string("two"), .array([.double(3.5), .null]), .object([:])]))
    }

    @Test func parsesObjects() throws {
        #expect(try JSONValue.parse("{}") == .object([:]))
        let value = try JSONValue.parse(#"{"a": 1, "b": {"c": [true, false]}, "": "empty key"}"#)
        #expect(
            value
                == .object([
                    "a": .int(1),
                    "b": .object(["c": .array([.bool(true), .bool(false)])]),
                    "": .string("empty key"),
                ]))
    }

    @Test func duplicateObjectKeysKeepTheLastValue() throws {
        let value = try JSONValue.parse(#"{"a": 1, "b": 2, "a": 3}"#)
        #expect(value == .object(["a": .int(3), "b": .int(2)]))
    }

    @Test func duplicateKeysInNestedObjectsAreIndependent() throws {
        let value = try JSONValue.parse(#"{"x": {"a": 1, "a": 2}, "y": {"a": 3}}"#)
        #expect(value == .object(["x": .object(["a": .int(2)]), "y": .object(["a": .int(3)])]))
    }

    @Test func canonicallyEquivalentKeysCollapseIntoOneEntry() throws {
        // Swift String equality is Unicode-canonical, so "é" (U+00E9) and "e" + U+0301 are the same key.
        let value = try JSONValue.parse("{\"\u{E9}\": 1, \"e\u{301}\": 2}")
        #expect(value.objectValue?.count == 1)
        #expect(value["\u{E9}"] == .int(2))
    }

    @Test func acceptsTheFourJSONWhitespaceCharacters() throws {
        #expect(
            try JSONValue.parse(" \t\r\n[ \t\r\n1 \t\r\n, \t\r\n{ \"a\" \n: \r2 } ] \t\r\n")
                == .array([.int(1), .object(["a": .int(2)])]))
    }

    @Test func parsesTheSameFromRawBufferByteArrayAndString() throws {
        let text = #"{"intent": {"type": "SendMessage", "parameters": {"n": 3, "ratio": 0.5, "to": ["ann", "bob"]}}}"#
        let bytes = Array(text.utf8)
        let fromString = try JSONValue.parse(text)
        let fromBytes = try JSONValue.parse(bytes)
        let fromBuffer = try bytes.withUnsafeBytes { buffer throws(JSONError) in try JSONValue.parse(buffer) }
        #expect(fromString == fromBytes)
        #expect(fromBytes == fromBuffer)
        #expect(fromString["intent"]?["parameters"]?["to"]?[1] == .string("bob"))
    }

    @Test func parsesFromASliceOfALargerBuffer() throws {
        let bytes = Array("xx[1,2]yy".utf8)
        let value = try bytes.withUnsafeBytes { buffer throws(JSONError) in
            try JSONValue.parse(UnsafeRawBufferPointer(rebasing: buffer[2..<7]))
        }
        #expect(value == .array([.int(1), .int(2)]))
    }

    @Test func parsesARealisticBrokerBody() throws {
        let body = #"""
            {"intent":{"type":"SendMessage","identifier":"7F3A9C2E","parameters":{"content":"Running late, be there in 10 minutes",
            "recipients":[{"displayName":"Alice Smith","handle":"+15551234567","handleType":"phoneNumber"}],"count":3,"ratio":0.75,
            "urgent":true,"note":null}},"confirm":{"code":"ready"}}
            """#
        let value = try JSONValue.parse(body)
        #expect(value["intent"]?["type"]?.stringValue == "SendMessage")
        #expect(value["intent"]?["parameters"]?["recipients"]?[0]?["handle"]?.stringValue == "+15551234567")
        #expect(value["intent"]?["parameters"]?["count"]?.intValue == 3)
        #expect(value["intent"]?["parameters"]?["ratio"]?.doubleValue == 0.75)
        #expect(value["intent"]?["parameters"]?["urgent"]?.boolValue == true)
        #expect(value["intent"]?["parameters"]?["note"]?.isNull == true)
        #expect(value["confirm"]?["code"] == .string("ready"))
    }
}
