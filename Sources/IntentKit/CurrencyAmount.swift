public import ConciergeJSON

#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif

/// An amount of money in a currency.
///
/// JSON: `{"amount": "12.50", "currencyCode": "EUR"}`: the amount is a decimal *string* (digits, an optional leading
/// `-` and an optional fractional part; no exponent, no grouping), so no precision is lost in binary floating point.
/// Amounts are encoded in their shortest form (`"12.50"` comes back as `"12.5"`).
public struct CurrencyAmount: IntentScalarValue {
    /// The amount.
    public var amount: Decimal
    /// The ISO 4217 currency code, e.g. `EUR`.
    public var currencyCode: String

    /// Creates an amount.
    public init(amount: Decimal, currencyCode: String) {
        self.amount = amount
        self.currencyCode = currencyCode
    }

    /// Creates an amount from a decimal string such as `"12.50"`; nil if the string is not a plain decimal number.
    public init?(_ amount: String, currencyCode: String) {
        guard let decimal = Self.parseDecimal(amount) else { return nil }
        self.init(amount: decimal, currencyCode: currencyCode)
    }

    public static var intentParameterType: ParameterType { .currencyAmount }

    public init(intentJSON json: JSONValue) throws(IntentValueError) {
        var reader = try _ObjectReader(json, expected: "currency amount object")
        let text = try reader.requiredString("amount")
        let code = try reader.requiredString("currencyCode")
        try reader.finish(known: ["amount", "currencyCode"])
        guard let decimal = Self.parseDecimal(text) else {
            throw IntentValueError(
                code: .invalidValue,
                message: "amount: expected a decimal string such as \"12.50\", got \"\(text)\""
            )
        }
        let letters = Array(code.utf8)
        guard letters.count == 3, letters.allSatisfy({ $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") }) else {
            throw IntentValueError(
                code: .invalidValue,
                message: "currencyCode: expected an ISO 4217 code of three capital letters, got \"\(code)\""
            )
        }
        self.init(amount: decimal, currencyCode: code)
    }

    public var intentJSON: JSONValue {
        .object(["amount": .string(amount.description), "currencyCode": .string(currencyCode)])
    }

    /// Strictly parses `-?[0-9]+(\.[0-9]+)?`.
    static func parseDecimal(_ text: String) -> Decimal? {
        var digitsBefore = 0
        var digitsAfter = 0
        var seenPoint = false
        for (index, byte) in text.utf8.enumerated() {
            switch byte {
            case UInt8(ascii: "-") where index == 0: continue
            case UInt8(ascii: "."):
                guard !seenPoint, digitsBefore > 0 else { return nil }
                seenPoint = true
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                if seenPoint { digitsAfter += 1 } else { digitsBefore += 1 }
            default: return nil
            }
        }
        guard digitsBefore > 0, !seenPoint || digitsAfter > 0, digitsBefore + digitsAfter <= 38 else { return nil }
        return Decimal(string: text)
    }
}
