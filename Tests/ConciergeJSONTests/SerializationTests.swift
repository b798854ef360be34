import ConciergeJSON
import Testing

@Suite("Serialization")
struct SerializationTests {
    @Test func serializesScalars() {
        #expect(JSONValue.null.serializedString() == "null")
        #expect(JSONValue.bool(true).serializedString() == "true")
        #expect(JSONValue.bool(false).serializedString() == "false")
        #expect(JSONValue.int(0).serializedString() == "0")
        #expect(JSONValue.int(-42).serializedString() == "-42")
        #expect(JSONValue.string("hi").serializedString() == "\"hi\"")
    }

    @Test func serializesInt64Extremes() {
        #expect(JSONValue.int(.max).serializedString() == "9223372036854775807")
        #expect(JSONValue.int(.min).serializedString() == "-9223372036854775808")
    }

    @Test func serializesCompactlyWithoutWhitespace() throws {
        let value = try JSONValue.parse(" [ 1 , { \"a\" : [ ] , \"b\" : { } } , \"x y\" ] ")
        #expect(value.serializedString() == #"[1,{"a":[],"b":{}},"x y"]"#)
    }

    @Test func serializesKeysSorted() {
        let value: JSONValue = ["b": 1, "a": 2, "c": ["z": true, "y": false], "B": 3, "aa": 4, "": 5]
        #expect(value.serializedString() == #"{"":5,"B":3,"a":2,"aa":4,"b":1,"c":{"y":false,"z":true}}"#)
    }

    @Test func sortsKeysByUTF8BytesNotSwiftStringOrder() {
        // U+212B ANGSTROM SIGN (E2 84 AB) normalizes to U+00C5, so Swift's `<` puts it before U+00D0
        // (C3 90); byte order puts it after.
        let angstrom = "\u{212B}"
        let eth = "\u{D0}"
        #expect(angstrom < eth)
        let value: JSONValue = .object([angstrom: 1, eth: 2, "z": 3, "\u{1F600}": 4])
        #expect(value.serializedString() == "{\"z\":3,\"\u{D0}\":2,\"\u{212B}\":1,\"\u{1F600}\":4}")
    }

    @Test func sortsLargeObjectsByKey() throws {
        var members: JSONObject = [:]
        for number in 0..<100 { members["k\(number)"] = .int(Int64(number)) }
        let text = JSONValue.object(members).serializedString()
        let expectedKeys = (0..<100).map { "k\($0)" }.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        let expected = "{" + expectedKeys.map { "\"\($0)\":\($0.dropFirst())" }.joined(separator: ",") + "}"
        #expect(text == expected)
    }

    @Test func serializationIsDeterministic() {
        let value: JSONValue = ["delta": 4, "alpha": 1, "charlie": 3, "bravo": 2, "echo": ["y": 1, "x": 2]]
        let first = value.serialized()
        for _ in 0..<10 {
            let copy = JSONValue.object(value.objectValue!)
            #expect(copy.serialized() == first)
        }
    }

    @Test func escapesQuotesBackslashesAndNamedControlCharacters() {
        let value = JSONValue.string("a\"b\\c\n\r\t\u{08}\u{0C}/")
        #expect(value.serializedString() == #""a\"b\\c\n\r\t\b\f/""#)
    }

    @Test func escapesOtherControlCharactersAsUnicodeEscapes() {
        #expect(JSONValue.string("\u{0}\u{1}\u{1F}\u{0B}").serializedString() == #""\u0000\u0001\u001f\u000b""#)
    }

    @Test func escapesEveryControlCharacter() throws {
        for byte in UInt8(0)..<0x20 {
            let value = JSONValue.string(String(decoding: [byte], as: UTF8.self))
            let bytes = value.serialized()
            #expect(!bytes.contains(byte))
            #expect(try JSONValue.parse(bytes) == value)
        }
    }

    @Test func leavesNonASCIIUnescaped() {
        #expect(JSONValue.string("é€😀\u{7F}\u{2028}").serialized() == Array("\"é€😀\u{7F}\u{2028}\"".utf8))
    }

    @Test func escapesSpecialBytesAtEveryPositionAcrossWordBoundaries() throws {
        for length in 0..<20 {
            for position in 0...length {
                for special in ["\"", "\\", "\n", "\u{1}"] {
                    var content =
                        String(repeating: "é", count: length / 3) + String(repeating: "x", count: length - length / 3)
                    content.insert(
                        contentsOf: special,
                        at: content.index(content.startIndex, offsetBy: min(position, content.count)))
                    let value = JSONValue.string(content)
                    #expect(try reparsed(value) == value)
                }
            }
        }
    }

    @Test func serializesIntegralDoublesWithFractionSoTheyStayDoubles() throws {
        #expect(JSONValue.double(1).serializedString() == "1.0")
        #expect(JSONValue.double(-3).serializedString() == "-3.0")
        #expect(JSONValue.double(1e15).serializedString() == "1000000000000000.0")
        #expect(JSONValue.double(1e16).serializedString() == "1e+16")
        for number in [1.0, -3.0, 1e15, 1e16, 1e300, 9_007_199_254_740_992.0] {
            #expect(try reparsed(.double(number)) == .double(number))
        }
    }

    @Test func serializesNegativeZeroDouble() throws {
        #expect(JSONValue.double(-0.0).serializedString() == "-0.0")
        let back = try reparsed(.double(-0.0))
        #expect(back.doubleValue?.sign == .minus)
    }

    @Test func serializesNonFiniteDoublesAsNull() {
        #expect(JSONValue.double(.nan).serializedString() == "null")
        #expect(JSONValue.double(.infinity).serializedString() == "null")
        #expect(JSONValue.array([.double(-.infinity)]).serializedString() == "[null]")
    }

    @Test func roundTripsDoublesBitExactly() throws {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        var checked = 0
        while checked < 2000 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let number = Double(bitPattern: state)
            guard number.isFinite else { continue }
            checked += 1
            let back = try reparsed(.double(number))
            guard case .double(let parsed) = back else {
                Issue.record("\(number) re-parsed as \(back)")
                continue
            }
            #expect(parsed.bitPattern == number.bitPattern, "\(number)")
        }
        for number in [
            0.1, 1.0 / 3, .pi, .leastNonzeroMagnitude, .leastNormalMagnitude, .greatestFiniteMagnitude, 1e23,
        ] {
            #expect(try reparsed(.double(number)) == .double(number))
        }
    }

    @Test func roundTripsNestedObjects() throws {
        let value: JSONValue = [
            "intent": [
                "type": "SendMessage",
                "parameters": [
                    "content": "Line 1\nLine \"2\" \\ é 😀",
                    "recipients": [["displayName": "Ann", "handle": nil], ["displayName": "Bob"]],
                    "count": 3, "ratio": 0.75, "big": .int(.min), "urgent": true,
                    "empty": [:], "list": [],
                ],
            ],
            "resolve": ["a": ["kind": "success", "value": 1.5e-300]],
        ]
        #expect(try reparsed(value) == value)
        #expect(try JSONValue.parse(value.serializedString()) == value)
    }

    @Test func roundTripsParsedText() throws {
        let text = #"{"a":[1,-2.5,"x\u0001\"",true,false,null,{}],"b":{"c":1e+100},"d":""}"#
        let value = try JSONValue.parse(text)
        let canonical = value.serializedString()
        #expect(canonical == #"{"a":[1,-2.5,"x\u0001\"",true,false,null,{}],"b":{"c":1e+100},"d":""}"#)
        #expect(try JSONValue.parse(canonical).serializedString() == canonical)
    }

    @Test func writeIntoAppendsToExistingBytes() {
        var buffer = Array("prefix:".utf8)
        JSONValue.array([1, "two"]).write(into: &buffer)
        JSONValue.null.write(into: &buffer)
        #expect(String(decoding: buffer, as: UTF8.self) == #"prefix:[1,"two"]null"#)
    }

    @Test func serializedAndSerializedStringAgree() {
        let value: JSONValue = ["k": ["é", 1, 2.5, nil]]
        #expect(Array(value.serializedString().utf8) == value.serialized())
    }

    @Test func descriptionIsTheSerializedString() {
        let value: JSONValue = ["b": [1, 2], "a": "x"]
        #expect(value.description == #"{"a":"x","b":[1,2]}"#)
        #expect("\(value)" == value.serializedString())
    }
}
