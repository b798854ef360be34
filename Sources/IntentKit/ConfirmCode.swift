/// The code of a confirm response (SiriKit's `...IntentResponseCode` for the confirm phase).
///
/// Extensible: add intent-specific codes as static members and list them in ``Intent/confirmCodes``.
/// ```swift
/// extension ConfirmCode {
///     public static let failureInsufficientFunds = ConfirmCode("failureInsufficientFunds")
/// }
/// ```
public struct ConfirmCode: RawRepresentable, Sendable, Hashable, ExpressibleByStringLiteral, CustomStringConvertible {
    /// The code on the wire.
    public let rawValue: String

    /// Creates a code from its wire form.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// Creates a code from its wire form.
    public init(_ rawValue: String) { self.rawValue = rawValue }

    public init(stringLiteral value: String) { self.rawValue = value }

    public var description: String { rawValue }

    /// The handler is ready to handle the intent; the lifecycle goes on.
    public static let ready = ConfirmCode("ready")
    /// The intent cannot be handled.
    public static let failure = ConfirmCode("failure")
    /// The intent cannot be handled here; the user must continue in the app (see the user activity).
    public static let failureRequiringAppLaunch = ConfirmCode("failureRequiringAppLaunch")

    /// The standard codes every intent has: ready, failure, failureRequiringAppLaunch.
    public static let standard: [ConfirmCode] = [.ready, .failure, .failureRequiringAppLaunch]
}
