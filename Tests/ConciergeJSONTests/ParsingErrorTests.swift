import ConciergeJSON
import Testing

@Suite("Rejecting invalid documents")
struct ParsingErrorTests {
    // MARK: unexpected-end

    @Test func rejectsEmptyInput() throws {
        #expect(parseError("") == JSONError(code: .unexpectedEnd, offset: 0))
        #expect(parseError(" \n\t") == JSONError(code: .unexpectedEnd, offset: 3))
        let empty: [UInt8] = []
        let error = empty.withUnsafeBytes { buffer in
            Result { () throws(JSONError) -> JSONValue in try JSONValue.parse(buffer) }
        }
        #expect(throws: JSONError(code: .unexpectedEnd, offset: 0)) { try error.get() }
    }

    @Test(arguments: [
        "[", "[1", "[1,", "{", #"{"a""#, #"{"a":"#, #"{"a":1"#, #"{"a":1,"#, #""abc"#,
        "tru", "fals", "nul", #""\"#, #""\u12"#, #""a\""#,
    ])
    func rejectsTruncatedDocuments(text: String) {
        #expect(parseError(text) == JSONError(code: .unexpectedEnd, offset: text.utf8.count))
    }

    // MARK: unexpected-character

    @Test func rejectsPlusSign() {
        #expect(parseError("+1") == JSONError(code: .unexpectedCharacter, offset: 0))
    }

    @Test func rejectsLeadingDecimalPoint() {
        #expect(parseError(".5") == JSONError(code: .unexpectedCharacter, offset: 0))
    }

    @Test(arguments: [("NaN", 0), ("Infinity", 0), ("inf", 0), ("nan", 1), ("[1,NaN]", 3)])
    func rejectsNaNAndInfinity(text: String, offset: Int) {
        // "nan" starts like "null", so it fails at its second byte.
        #expect(parseError(text) == JSONError(code: .unexpectedCharacter, offset: offset))
    }

    @Test func rejectsMisspelledLiterals() {
        #expect(parseError("trUe") == JSONError(code: .unexpectedCharacter, offset: 2))
        #expect(parseError("nil") == JSONError(code: .unexpectedCharacter, offset: 1))
        #expect(parseError("False") == JSONError(code: .unexpectedCharacter, offset: 0))
    }

    @Test func rejectsTrailingCommas() {
        #expect(parseError("[1,]") == JSONError(code: .unexpectedCharacter, offset: 3))
        #expect(parseError(#"{"a":1,}"#) == JSONError(code: .unexpectedCharacter, offset: 7))
    }

    @Test func rejectsMissingSeparators() {
        #expect(parseError("[1 2]") == JSONError(code: .unexpectedCharacter, offset: 3))
        #expect(parseError(#"{"a" 1}"#) == JSONError(code: .unexpectedCharacter, offset: 5))
        #expect(parseError(#"{"a":1 "b":2}"#) == JSONError(code: .unexpectedCharacter, offset: 7))
    }

    @Test func rejectsNonStringObjectKeys() {
        #expect(parseError("{a:1}") == JSONError(code: .unexpectedCharacter, offset: 1))
        #expect(parseError("{1:1}") == JSONError(code: .unexpectedCharacter, offset: 1))
        #expect(parseError("{'a':1}") == JSONError(code: .unexpectedCharacter, offset: 1))
    }

    @Test func rejectsMismatchedBrackets() {
        #expect(parseError("[1}") == JSONError(code: .unexpectedCharacter, offset: 2))
        #expect(parseError(#"{"a":1]"#) == JSONError(code: .unexpectedCharacter, offset: 6))
    }

    @Test(arguments: ["\u{0B}1", "\u{0C}1", "\u{A0}1", "1\u{0C}", "[1,\u{0C}2]"])
    func rejectsNonJSONWhitespace(text: String) {
        #expect(parseError(text) != nil)
    }

    @Test func rejectsFormFeedAsWhitespaceWithPreciseCodes() {
        #expect(parseError("\u{0C}1") == JSONError(code: .unexpectedCharacter, offset: 0))
        #expect(parseError("1\u{0C}") == JSONError(code: .trailingData, offset: 1))
    }

    // MARK: invalid-number

    @Test func rejectsLeadingZeros() {
        #expect(parseError("01") == JSONError(code: .invalidNumber, offset: 1))
        #expect(parseError("-01") == JSONError(code: .invalidNumber, offset: 2))
        #expect(parseError("00.5") == JSONError(code: .invalidNumber, offset: 1))
        #expect(parseError("[007]") == JSONError(code: .invalidNumber, offset: 2))
    }

    @Test func acceptsSingleZeroBeforeFractionOrExponent() throws {
        #expect(try JSONValue.parse("0.5") == .double(0.5))
        #expect(try JSONValue.parse("0e5") == .double(0))
        #expect(try JSONValue.parse("-0.5") == .double(-0.5))
    }

    @Test func rejectsTrailingDecimalPoint() {
        #expect(parseError("1.") == JSONError(code: .invalidNumber, offset: 2))
        #expect(parseError("1.e5") == JSONError(code: .invalidNumber, offset: 2))
        #expect(parseError("[1.]") == JSONError(code: .invalidNumber, offset: 3))
    }

    @Test func rejectsIncompleteExponents() {
        #expect(parseError("1e") == JSONError(code: .invalidNumber, offset: 2))
        #expect(parseError("1e+") == JSONError(code: .invalidNumber, offset: 3))
        #expect(parseError("1E-x") == JSONError(code: .invalidNumber, offset: 3))
    }

    @Test func rejectsMinusWithoutDigits() {
        #expect(parseError("-") == JSONError(code: .invalidNumber, offset: 1))
        #expect(parseError("-a") == JSONError(code: .invalidNumber, offset: 1))
        #expect(parseError("-.5") == JSONError(code: .invalidNumber, offset: 1))
        #expect(parseError("-Infinity") == JSONError(code: .invalidNumber, offset: 1))
        #expect(parseError("--1") == JSONError(code: .invalidNumber, offset: 1))
    }

    @Test func rejectsHexadecimalNumbers() {
        #expect(parseError("0x10") == JSONError(code: .trailingData, offset: 1))
    }

    @Test func rejectsDoublesOutsideTheFiniteRange() {
        #expect(parseError("1e400") == JSONError(code: .invalidNumber, offset: 0))
        #expect(parseError("[-1.5e309]") == JSONError(code: .invalidNumber, offset: 1))
    }

    // MARK: invalid-string

    @Test func rejectsUnescapedControlCharacters() {
        for byte in UInt8(0)..<0x20 {
            #expect(parseError(quoted([UInt8(ascii: "a"), byte])) == JSONError(code: .invalidString, offset: 2))
        }
        // Also on the escape path and in keys.
        #expect(parseError("\"\\n\n\"") == JSONError(code: .invalidString, offset: 3))
        #expect(parseError("{\"a\tb\":1}") == JSONError(code: .invalidString, offset: 3))
    }

    @Test func rejectsUnescapedControlCharactersAtAnyPositionInLongStrings() {
        // Long enough for the 8-byte scanning path, with the bad byte at every offset.
        for length in 1..<24 {
            for position in 0..<length {
                for bad: UInt8 in [0x00, 0x0A, 0x1F] {
                    var content = [UInt8](repeating: UInt8(ascii: "a"), count: length)
                    content[position] = bad
                    #expect(parseError(quoted(content)) == JSONError(code: .invalidString, offset: 1 + position))
                    // Same after an escape (slow path).
                    #expect(
                        parseError(quoted(Array("\\t".utf8) + content))
                            == JSONError(code: .invalidString, offset: 3 + position))
                }
            }
        }
    }

    @Test func acceptsDeleteCharacterUnescaped() throws {
        #expect(try JSONValue.parse(quoted([0x7F])) == .string("\u{7F}"))
    }

    // MARK: invalid-escape

    @Test(arguments: [#""\x""#, #""\a""#, #""\U0041""#, #""\'""#, #""\0""#, #""\ ""#])
    func rejectsInvalidEscape(text: String) {
        #expect(parseError(text) == JSONError(code: .invalidEscape, offset: 1))
    }

    @Test func rejectsNonHexUnicodeEscape() {
        #expect(parseError(#""\u12G4""#) == JSONError(code: .invalidEscape, offset: 1))
        #expect(parseError(#""ab\u-123""#) == JSONError(code: .invalidEscape, offset: 3))
    }

    @Test func rejectsLoneSurrogateEscape() {
        #expect(parseError(#""\ud800""#) == JSONError(code: .invalidEscape, offset: 1))
        #expect(parseError(#""\uDBFFx""#) == JSONError(code: .invalidEscape, offset: 1))
        #expect(parseError(#""\udc00""#) == JSONError(code: .invalidEscape, offset: 1))
        #expect(parseError(#""a\uDFFF\ud800""#) == JSONError(code: .invalidEscape, offset: 2))
    }

    @Test func rejectsMisPairedSurrogateEscapes() {
        // High surrogate followed by a non-surrogate, by another high surrogate, or by a simple escape.
        #expect(parseError(#""\ud83d\u0041""#) == JSONError(code: .invalidEscape, offset: 1))
        #expect(parseError(#""\ud83d\ud83d""#) == JSONError(code: .invalidEscape, offset: 1))
        #expect(parseError(#""\ud83d\n""#) == JSONError(code: .invalidEscape, offset: 1))
        // Low surrogate written with bad hex digits: reported at its own backslash.
        #expect(parseError(#""\ud83d\uZZZZ""#) == JSONError(code: .invalidEscape, offset: 7))
    }

    // MARK: invalid-utf8

    @Test(arguments: [
        [0xC0, 0xAF] as [UInt8],  // overlong "/"
        [0xC1, 0xBF],  // overlong
        [0xE0, 0x80, 0xAF],  // overlong 3-byte
        [0xE0, 0x9F, 0xBF],  // overlong 3-byte (just below U+0800)
        [0xF0, 0x80, 0x80, 0xAF],  // overlong 4-byte
        [0xF0, 0x8F, 0xBF, 0xBF],  // overlong 4-byte (just below U+10000)
    ])
    func rejectsOverlongUTF8(sequence: [UInt8]) {
        #expect(parseError(quoted([UInt8(ascii: "x")] + sequence)) == JSONError(code: .invalidUTF8, offset: 2))
    }

    @Test(arguments: [[0xED, 0xA0, 0x80] as [UInt8], [0xED, 0xBF, 0xBF], [0xED, 0xAD, 0xBF]])
    func rejectsSurrogatesEncodedInUTF8(sequence: [UInt8]) {
        #expect(parseError(quoted(sequence)) == JSONError(code: .invalidUTF8, offset: 1))
    }

    @Test(arguments: [
        [0xF4, 0x90, 0x80, 0x80] as [UInt8], [0xF5, 0x80, 0x80, 0x80], [0xF7, 0xBF, 0xBF, 0xBF], [0xFF], [0xFE],
    ])
    func rejectsCodePointsAboveU10FFFF(sequence: [UInt8]) {
        #expect(parseError(quoted(sequence)) == JSONError(code: .invalidUTF8, offset: 1))
    }

    @Test(arguments: [
        [0xC3] as [UInt8], [0xE2, 0x82], [0xF0, 0x9F, 0x98], [0xE2, 0x41, 0x41], [0xF0, 0x9F, 0x41, 0x41],
    ])
    func rejectsTruncatedUTF8Sequences(sequence: [UInt8]) {
        #expect(parseError(quoted(sequence)) == JSONError(code: .invalidUTF8, offset: 1))
        // Truncated by the end of the input as well.
        #expect(parseError([UInt8(ascii: "\"")] + sequence) == JSONError(code: .invalidUTF8, offset: 1))
    }

    @Test func rejectsStrayContinuationBytes() {
        #expect(parseError(quoted([0x80])) == JSONError(code: .invalidUTF8, offset: 1))
        #expect(
            parseError(quoted([0x41, 0x41, 0x41, 0x41, 0x41, 0x41, 0x41, 0x41, 0xBF]))
                == JSONError(code: .invalidUTF8, offset: 9))
    }

    @Test func rejectsInvalidUTF8AtAnyPositionInLongStrings() {
        for length in 1..<24 {
            for position in 0..<length {
                var content = [UInt8](repeating: UInt8(ascii: "b"), count: length)
                content[position] = 0xC0
                #expect(parseError(quoted(content)) == JSONError(code: .invalidUTF8, offset: 1 + position))
            }
        }
    }

    @Test func rejectsInvalidUTF8AfterAnEscape() {
        #expect(parseError(quoted(Array("\\n".utf8) + [0xC0, 0x80])) == JSONError(code: .invalidUTF8, offset: 3))
    }

    @Test func acceptsBoundaryCodePoints() throws {
        // U+0080, U+07FF, U+0800, U+D7FF, U+E000, U+FFFF, U+10000, U+10FFFF
        let sequences: [[UInt8]] = [
            [0xC2, 0x80], [0xDF, 0xBF], [0xE0, 0xA0, 0x80], [0xED, 0x9F, 0xBF],
            [0xEE, 0x80, 0x80], [0xEF, 0xBF, 0xBF], [0xF0, 0x90, 0x80, 0x80], [0xF4, 0x8F, 0xBF, 0xBF],
        ]
        let expected: [Unicode.Scalar] = [
            "\u{80}", "\u{7FF}", "\u{800}", "\u{D7FF}", "\u{E000}", "\u{FFFF}", "\u{10000}", "\u{10FFFF}",
        ]
        for (sequence, scalar) in zip(sequences, expected) {
            #expect(try JSONValue.parse(quoted(sequence)) == .string(String(scalar)))
        }
    }

    // MARK: too-deep

    @Test func respectsMaxDepth() throws {
        let allowed = String(repeating: "[", count: 64) + String(repeating: "]", count: 64)
        #expect(parseError(allowed) == nil)
        let tooDeep = String(repeating: "[", count: 65) + String(repeating: "]", count: 65)
        #expect(parseError(tooDeep) == JSONError(code: .tooDeep, offset: 64))
    }

    @Test func respectsCustomMaxDepthForObjectsAndArrays() {
        #expect(parseError(#"{"a":[1]}"#, maxDepth: 2) == nil)
        #expect(parseError(#"{"a":[{}]}"#, maxDepth: 2) == JSONError(code: .tooDeep, offset: 6))
        #expect(parseError(#"[{"a":1}]"#, maxDepth: 1) == JSONError(code: .tooDeep, offset: 1))
    }

    @Test func maxDepthZeroAllowsOnlyScalars() {
        #expect(parseError("\"s\"", maxDepth: 0) == nil)
        #expect(parseError("[]", maxDepth: 0) == JSONError(code: .tooDeep, offset: 0))
        #expect(parseError("{}", maxDepth: 0) == JSONError(code: .tooDeep, offset: 0))
    }

    @Test func rejectsDeeplyNestedInputWithoutCrashing() {
        let hostile = String(repeating: "[", count: 100_000)
        #expect(parseError(hostile) == JSONError(code: .tooDeep, offset: 64))
    }

    // MARK: trailing-data

    @Test func rejectsTrailingData() {
        #expect(parseError("1 2") == JSONError(code: .trailingData, offset: 2))
        #expect(parseError("{} x") == JSONError(code: .trailingData, offset: 3))
        #expect(parseError("nulll") == JSONError(code: .trailingData, offset: 4))
        #expect(parseError("[1]]") == JSONError(code: .trailingData, offset: 3))
        #expect(parseError("\"a\"\u{0}") == JSONError(code: .trailingData, offset: 3))
    }

    @Test func allowsTrailingWhitespace() {
        #expect(parseError("1 \t\r\n") == nil)
    }

    // MARK: offsets

    @Test func reportsOffsetsInUTF8Bytes() {
        // "é" is two bytes, so the bad escape's backslash sits at byte 3, although it is character 2.
        #expect(parseError("\"é\\q\"") == JSONError(code: .invalidEscape, offset: 3))
        #expect(parseError("[\"€\", 01]") == JSONError(code: .invalidNumber, offset: 9))
    }
}
