import ConciergeJSON
import Foundation
import IntentKit
import PropertyBased
import Testing

/// `CurrencyAmount` parses its decimal text itself and keeps the shortest text for its JSON; these tests hold both to
/// what Foundation's `Decimal(string:)` and `Decimal.description` give.
@Suite("Currency amounts")
struct CurrencyAmountTests {
    /// The text of a random plain decimal: an optional `-`, 1 to 25 integer digits, and 0 to 13 fraction digits
    /// (biased to zeros, so that leading and trailing zeros and zero itself come up often).
    static func text(negative: Bool, integer: [Int], fraction: [Int]) -> String {
        let digit = { (value: Int) in value >= 10 ? "0" : String(value) }
        var text = negative ? "-" : ""
        text += integer.map(digit).joined()
        if !fraction.isEmpty { text += "." + fraction.map(digit).joined() }
        return text
    }

    @Test func parsingAndEncodingAgreeWithFoundation() async {
        await propertyCheck(
            count: 2000, input: Gen.bool, Gen.int(in: 0...14).array(of: 1...25), Gen.int(in: 0...14).array(of: 0...13)
        ) { negative, integer, fraction in
            let text = Self.text(negative: negative, integer: integer, fraction: fraction)
            let reference = Decimal(string: text)
            let amount = CurrencyAmount(text, currencyCode: "EUR")
            #expect(amount?.amount == reference, "value of \(text)")
            #expect(amount?.intentJSON["amount"]?.stringValue == reference?.description, "text of \(text)")
            let decoded = try? CurrencyAmount(intentJSON: ["amount": .string(text), "currencyCode": "EUR"])
            #expect(decoded == amount, "decoding \(text)")
            #expect(decoded?.intentJSON == amount?.intentJSON, "encoding \(text)")
        }
    }

    @Test(arguments: [
        ("12.50", "12.5"), ("0012.50", "12.5"), ("100", "100"), ("0.05", "0.05"), ("-0", "0"), ("-0.000", "0"),
        ("1.000", "1"), ("-12.5", "-12.5"), ("12345678901234567890.5", "12345678901234567890.5"),
        ("99999999999999999999999999999999999999", "99999999999999999999999999999999999999"),
    ])
    func shortestText(text: String, shortest: String) {
        #expect(CurrencyAmount(text, currencyCode: "EUR")?.intentJSON["amount"]?.stringValue == shortest)
        #expect(Decimal(string: text)?.description == shortest)
    }

    @Test(arguments: [
        "", "-", ".5", "1.", "1.2.3", "+1", "1e5", " 1", "1 ", "--1", "1-", "0x10", "١٢",
        String(repeating: "9", count: 39),
    ])
    func malformedAmountsAreRefused(text: String) {
        #expect(CurrencyAmount(text, currencyCode: "EUR") == nil)
        #expect(throws: IntentValueError.self) {
            try CurrencyAmount(intentJSON: ["amount": .string(text), "currencyCode": "EUR"])
        }
    }

    @Test func settingTheAmountChangesItsText() {
        var amount = CurrencyAmount("12.50", currencyCode: "EUR")!
        amount.amount = Decimal(string: "7.25")!
        #expect(amount.intentJSON == ["amount": "7.25", "currencyCode": "EUR"])
        amount.amount += 1
        #expect(amount.intentJSON == ["amount": "8.25", "currencyCode": "EUR"])
        #expect(amount == CurrencyAmount("8.250", currencyCode: "EUR"))
        #expect(Set([amount, CurrencyAmount("8.25", currencyCode: "EUR")!]).count == 1)
    }
}
