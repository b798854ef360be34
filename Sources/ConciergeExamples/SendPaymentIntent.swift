public import IntentKit

/// Send money to a contact (SiriKit's `INSendPaymentIntent`).
public struct SendPaymentIntent: Intent, Hashable {
    public static let intentType = "SendPayment"
    public static let intentDescription = "Send a payment in EUR or USD to one contact."
    public static let parameters: [IntentParameter<SendPaymentIntent>] = [
        .init(
            "payee", \.payee, required: true,
            description: "Who receives the money, matched against the contacts.",
            unsupportedReasons: ContactUnsupportedReason.allCases.map(\.rawValue)
        ),
        .init(
            "currencyAmount", \.currencyAmount, required: true,
            description: "How much, in EUR or USD; at most 10000.",
            unsupportedReasons: SendPaymentHandler.UnsupportedReason.allCases.map(\.rawValue)
        ),
        .init("note", \.note, description: "A note for the payee."),
    ]
    public static let confirmCodes: [ConfirmCode] = ConfirmCode.standard + [.failureInsufficientFunds]
    public static let handleCodes: [HandleCode] = HandleCode.standard + [.failureInsufficientFunds]

    public var identifier: String?
    /// Who receives the money.
    public var payee: Person?
    /// How much.
    public var currencyAmount: CurrencyAmount?
    /// A note for the payee.
    public var note: String?

    public init() {}

    /// Creates an intent with the given parameters.
    public init(payee: Person? = nil, currencyAmount: CurrencyAmount? = nil, note: String? = nil) {
        self.payee = payee
        self.currencyAmount = currencyAmount
        self.note = note
    }
}

extension ConfirmCode {
    /// The account does not hold enough money for the payment (a `SendPayment` confirm code).
    public static let failureInsufficientFunds = ConfirmCode("failureInsufficientFunds")
}

extension HandleCode {
    /// The account does not hold enough money for the payment (a `SendPayment` handle code).
    public static let failureInsufficientFunds = HandleCode("failureInsufficientFunds")
}
