public import IntentKit

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Handles ``SendPaymentIntent`` against the demo contacts and account (see ``DemoData``).
///
/// Resolution: `payee` through ``DemoData/resolveContact(_:)``; `currencyAmount` missing -> `needsValue`, a currency
/// other than EUR or USD -> `unsupported(paymentsCurrencyUnsupported)`, above 10000 ->
/// `unsupported(paymentsAmountAboveMaximum)`, zero or less -> `unsupported(paymentsAmountBelowMinimum)`;
/// `note` gets the default.
/// Confirm: `failureInsufficientFunds` above the demo balance of 2500, else `ready` with the payee and amount.
/// Handle: `success` with a `transactionId` (or `failureInsufficientFunds` / `failure`).
public struct SendPaymentHandler: IntentHandler {
    /// Unsupported reasons of `currencyAmount` (SiriKit's `INSendPaymentCurrencyAmountUnsupportedReason`).
    public enum UnsupportedReason: String, Sendable, CaseIterable {
        /// The amount is zero or negative.
        case paymentsAmountBelowMinimum
        /// The amount is above the maximum of one payment.
        case paymentsAmountAboveMaximum
        /// The currency is not EUR or USD.
        case paymentsCurrencyUnsupported
    }

    /// Creates a handler.
    public init() {}

    public func resolve(intent: SendPaymentIntent, context: HandlerContext) async throws -> Resolutions<
        SendPaymentIntent
    > {
        var resolutions = Resolutions<SendPaymentIntent>()
        resolutions[\.payee] = DemoData.resolveContact(intent.payee)
        resolutions[\.currencyAmount] = Self.resolveAmount(intent.currencyAmount)
        return resolutions
    }

    public func confirm(intent: SendPaymentIntent, context: HandlerContext) async throws -> ConfirmResponse<
        SendPaymentIntent
    > {
        guard let amount = intent.currencyAmount, case .success(let payee) = DemoData.resolveContact(intent.payee)
        else {
            return ConfirmResponse(code: .failure, message: "the payee or the amount is missing")
        }
        if amount.amount > DemoData.accountBalance {
            return ConfirmResponse(
                code: .failureInsufficientFunds,
                message: "the account holds \(DemoData.accountBalance) \(amount.currencyCode)")
        }
        return ConfirmResponse(
            code: .ready,
            data: ["payee": .string(payee.displayName), "currencyAmount": amount.intentJSON, "fee": "0"]
        )
    }

    public func handle(intent: SendPaymentIntent, context: HandlerContext) async throws -> HandleResponse<
        SendPaymentIntent
    > {
        guard let amount = intent.currencyAmount, case .success = Self.resolveAmount(amount),
            case .success(let payee) = DemoData.resolveContact(intent.payee)
        else {
            return HandleResponse(code: .failure, message: "the payee or the amount is missing or unsupported")
        }
        if amount.amount > DemoData.accountBalance {
            return HandleResponse(
                code: .failureInsufficientFunds,
                message: "the account holds \(DemoData.accountBalance) \(amount.currencyCode)")
        }
        return HandleResponse(
            code: .success,
            data: [
                "transactionId": .string(DemoData.nextID("txn")),
                "payee": .string(payee.customIdentifier ?? payee.displayName),
                "currencyAmount": amount.intentJSON,
            ]
        )
    }

    static func resolveAmount(_ amount: CurrencyAmount?) -> ResolutionResult<CurrencyAmount> {
        guard let amount else { return .needsValue }
        guard DemoData.paymentCurrencies.contains(amount.currencyCode) else {
            return .unsupported(UnsupportedReason.paymentsCurrencyUnsupported)
        }
        if amount.amount > DemoData.maximumPayment { return .unsupported(UnsupportedReason.paymentsAmountAboveMaximum) }
        if amount.amount <= 0 { return .unsupported(UnsupportedReason.paymentsAmountBelowMinimum) }
        return .success(amount)
    }
}
