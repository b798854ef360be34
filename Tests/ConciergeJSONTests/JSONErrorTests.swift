import ConciergeJSON
import Testing

@Suite("JSONError")
struct JSONErrorTests {
    @Test func codesHaveStableStrings() {
        let codes: [(JSONError.Code, String)] = [
            (.unexpectedEnd, "unexpected-end"),
            (.unexpectedCharacter, "unexpected-character"),
            (.invalidNumber, "invalid-number"),
            (.invalidString, "invalid-string"),
            (.invalidUTF8, "invalid-utf8"),
            (.invalidEscape, "invalid-escape"),
            (.tooDeep, "too-deep"),
            (.trailingData, "trailing-data"),
        ]
        for (code, text) in codes {
            #expect(code.description == text)
        }
        #expect(Set(codes.map(\.0)).count == codes.count)
    }

    @Test func descriptionNamesCodeAndOffset() {
        #expect(JSONError(code: .invalidUTF8, offset: 12).description == "invalid-utf8 at byte offset 12")
    }

    @Test func errorsCompareByCodeAndOffset() {
        #expect(JSONError(code: .tooDeep, offset: 1) == JSONError(code: .tooDeep, offset: 1))
        #expect(JSONError(code: .tooDeep, offset: 1) != JSONError(code: .tooDeep, offset: 2))
        #expect(JSONError(code: .tooDeep, offset: 1) != JSONError(code: .trailingData, offset: 1))
    }

    @Test func parseThrowsTypedJSONError() {
        do {
            _ = try JSONValue.parse("[1,]")
            Issue.record("expected an error")
        } catch {
            // `error` is statically a JSONError thanks to typed throws.
            #expect(error.code == .unexpectedCharacter)
            #expect(error.offset == 3)
        }
    }

    @Test func everyCodeIsProducedByTheParser() {
        let cases: [(String, JSONError.Code)] = [
            ("[", .unexpectedEnd),
            ("?", .unexpectedCharacter),
            ("01", .invalidNumber),
            ("\"\u{1}\"", .invalidString),
            (#""\q""#, .invalidEscape),
            ("[[1]]", .tooDeep),
            ("1 1", .trailingData),
        ]
        for (text, code) in cases {
            #expect(parseError(text, maxDepth: 1)?.code == code, "\(text)")
        }
        #expect(parseError(quoted([0xFF]))?.code == .invalidUTF8)
    }
}
