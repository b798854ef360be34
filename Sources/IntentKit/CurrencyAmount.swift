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
    public var amount: Decimal {
        get { storedAmount }
        set {
            storedAmount = newValue
            amountText = nil
        }
    }
    /// The ISO 4217 currency code, e.g. `EUR`.
    public var currencyCode: String

    private var storedAmount: Decimal
    /// The amount's shortest text (what `amount.description` gives) when the amount came from text and was not set
    /// since: Foundation's `Decimal.description` costs about 10,000 instructions, a third of a whole Echo job.
    private var amountText: String?

    /// Creates an amount.
    public init(amount: Decimal, currencyCode: String) {
        storedAmount = amount
        self.currencyCode = currencyCode
    }

    /// Creates an amount from a decimal string such as `"12.50"`; nil if the string is not a plain decimal number.
    public init?(_ amount: String, currencyCode: String) {
        guard let parsed = Self.parseDecimal(amount) else { return nil }
        self.init(amount: parsed.value, currencyCode: currencyCode)
        amountText = parsed.shortest
    }

    public static func == (left: Self, right: Self) -> Bool {
        left.storedAmount == right.storedAmount && left.currencyCode == right.currencyCode
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(storedAmount)
        hasher.combine(currencyCode)
    }

    public static var intentParameterType: ParameterType { .currencyAmount }

    public init(intentJSON json: JSONValue) throws(IntentValueError) {
        var reader = try _ObjectReader(json, expected: "currency amount object")
        let text = try reader.requiredString("amount")
        let code = try reader.requiredString("currencyCode")
        try reader.finish(known: ["amount", "currencyCode"])
        guard let parsed = Self.parseDecimal(text) else {
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
        self.init(amount: parsed.value, currencyCode: code)
        amountText = parsed.shortest
    }

    public var intentJSON: JSONValue {
        .object(["amount": .string(amountText ?? storedAmount.description), "currencyCode": .string(currencyCode)])
    }

    /// Strictly parses `-?[0-9]+(\.[0-9]+)?` (at most 38 digits): the value, and its shortest text, which is what
    /// `Decimal.description` gives for it (no leading zeros, no trailing zeros after the point, no point without
    /// digits after it, `0` for zero whatever its sign). Up to 19 significant digits the value is built from its
    /// integer significand; `Decimal(string:)` costs about 25 times as much.
    static func parseDecimal(_ text: String) -> (value: Decimal, shortest: String)? {
        var text = text
        return text.withUTF8 { bytes -> (value: Decimal, shortest: String)? in
            let negative = bytes.first == UInt8(ascii: "-")
            var index = negative ? 1 : 0
            let integerStart = index
            while index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") {
                index += 1
            }
            let integerEnd = index
            var fractionEnd = index
            if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
                index += 1
                while index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") {
                    index += 1
                }
                guard index > integerEnd + 1 else { return nil }  // a point without digits after it
                fractionEnd = index
            }
            let digits = (integerEnd - integerStart) + max(0, fractionEnd - integerEnd - 1)
            guard index == bytes.count, integerEnd > integerStart, digits <= 38 else { return nil }
            // The significant digits: the integer part without leading zeros, the fraction without trailing ones.
            var first = integerStart
            while first < integerEnd - 1, bytes[first] == UInt8(ascii: "0") { first += 1 }
            var last = fractionEnd  // one past the last digit kept
            if fractionEnd > integerEnd {
                while last > integerEnd + 1, bytes[last - 1] == UInt8(ascii: "0") { last -= 1 }
                if last == integerEnd + 1 { last = integerEnd }  // nothing left after the point
            }
            let kept = UnsafeBufferPointer(rebasing: bytes[first..<last])
            let isZero = kept.allSatisfy { $0 == UInt8(ascii: "0") || $0 == UInt8(ascii: ".") }
            if isZero { return (Decimal.zero, "0") }
            var shortest = negative ? "-" : ""
            shortest += String(decoding: kept, as: UTF8.self)
            var significand: UInt64 = 0
            var significantDigits = 0
            for byte in kept where byte != UInt8(ascii: ".") {
                if significantDigits == 0 && byte == UInt8(ascii: "0") { continue }  // "0.05": leading zeros
                significantDigits += 1
                if significantDigits > 19 { break }
                significand = significand * 10 + UInt64(byte - UInt8(ascii: "0"))
            }
            guard significantDigits <= 19 else {
                guard let value = Decimal(string: shortest) else { return nil }
                return (value, shortest)
            }
            let exponent = last > integerEnd ? -(last - integerEnd - 1) : 0
            let value = Decimal(sign: negative ? .minus : .plus, exponent: exponent, significand: Decimal(significand))
            return (value, shortest)
        }
    }
}
