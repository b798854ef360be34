import ConciergeJSON
import Testing

@Suite struct JSONTextTests {
    func escaped(_ text: String) -> String {
        var out: [UInt8] = []
        JSONText.appendString(text, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    func isValid(_ bytes: [UInt8]) -> Bool { bytes.withUnsafeBytes { JSONText.isValidUTF8($0) } }

    @Test func shortEscapesForTheFiveNamedControlCharacters() {
        #expect(escaped("\u{8}\u{C}\n\r\t") == #""\b\f\n\r\t""#)
        #expect(escaped("a\"b\\c/") == #""a\"b\\c/""#)
    }

    @Test func otherControlCharactersAreHexEscapedInLowerCase() {
        #expect(escaped("\u{0}\u{1}\u{B}\u{1F}") == #""\u0000\u0001\u000b\u001f""#)
        // DEL and everything from U+0080 up are copied as they are.
        #expect(escaped("\u{7F}é日🎉") == "\"\u{7F}é日🎉\"")
    }

    @Test func everyControlCharacterRoundTripsThroughTheParser() throws {
        for scalar in 0..<0x20 {
            let text = "x" + String(UnicodeScalar(UInt8(scalar))) + "y"
            var out: [UInt8] = []
            JSONText.appendString(text, to: &out)
            #expect(try JSONValue.parse(out) == .string(text), "U+\(scalar)")
        }
    }

    @Test func theSerializerEscapesStringsExactlyAsAppendStringDoes() {
        // Long enough to take the eight-bytes-at-a-time path as well as the byte path.
        let text = String((0..<0x80).map { Character(UnicodeScalar(UInt8($0))) }) + "\u{8} ünïcødé"
        var out: [UInt8] = []
        JSONText.appendString(text, to: &out)
        #expect(JSONValue.string(text).serialized() == out)
        #expect(JSONValue.object([text: .null]).serialized() == [UInt8(ascii: "{")] + out + Array(":null}".utf8))
    }

    @Test func wellFormedUTF8IsValid() {
        for text in ["", "Echo", "Café", "Größe", "日本語", "🎉", "a\u{0}b", "\u{10FFFF}", "\u{D7FF}\u{E000}"] {
            #expect(isValid(Array(text.utf8)), "\(text)")
        }
    }

    @Test func malformedUTF8IsInvalid() {
        let cases: [[UInt8]] = [
            [0x80], [0xBF], [0xC0, 0x80], [0xC1, 0xBF], [0xC2], [0xE0, 0x80, 0x80], [0xE0, 0x9F, 0xBF],
            [0xED, 0xA0, 0x80], [0xED, 0xBF, 0xBF], [0xF0, 0x80, 0x80, 0x80], [0xF0, 0x8F, 0xBF, 0xBF],
            [0xF4, 0x90, 0x80, 0x80], [0xF5, 0x80, 0x80, 0x80], [0xFF], [0xE2, 0x82], [0xF0, 0x9F, 0x8E],
            [0xE2, 0x28, 0xA1], [0xF0, 0x9F, 0x8E, 0x28], [0x41, 0xC3],
        ]
        for bytes in cases {
            #expect(!isValid(bytes), "\(bytes)")
        }
    }

    @Test func theValidatorAndTheParserAgreeOnEveryOneAndTwoByteSequence() {
        for first in 0...255 {
            for second in 0...255 {
                let two = [UInt8(first), UInt8(second)]
                let standard = String(validating: two, as: UTF8.self) != nil
                if isValid(two) != standard || isValid([two[0]]) != (String(validating: [two[0]], as: UTF8.self) != nil)
                {
                    Issue.record("validator disagrees with the standard library on \(two)")
                }
                // The parser rejects control characters inside strings: compare only where it may accept.
                guard first >= 0x20, second >= 0x20, first != 0x22, first != 0x5C, second != 0x22, second != 0x5C
                else { continue }
                let parses = (try? JSONValue.parse(quoted(two))) != nil
                if parses != standard { Issue.record("parser disagrees with the validator on \(two)") }
            }
        }
    }

    @Test func agreesWithTheStandardLibraryOnThreeAndFourByteSequences() {
        var generator = SystemRandomNumberGenerator()
        let leads: [UInt8] = [0xE0, 0xE1, 0xEC, 0xED, 0xEE, 0xEF, 0xF0, 0xF1, 0xF3, 0xF4, 0xF5]
        for lead in leads {
            for second in stride(from: 0x70, through: 0xC8, by: 1) {
                for _ in 0..<8 {
                    let tail = (0..<2).map { _ in UInt8.random(in: 0x70...0xC8, using: &generator) }
                    for sequence in [[lead, UInt8(second), tail[0]], [lead, UInt8(second)] + tail] {
                        if isValid(sequence) != (String(validating: sequence, as: UTF8.self) != nil) {
                            Issue.record("disagree on \(sequence)")
                        }
                    }
                }
            }
        }
    }
}
