/// The code of a handle response (SiriKit's `...IntentResponseCode` for the handle phase).
///
/// Extensible: add intent-specific codes as static members and list them in ``Intent/handleCodes``.
/// ```swift
/// extension HandleCode {
///     public static let failureRequiringAppLaunchNoServiceInArea = HandleCode("failureRequiringAppLaunchNoServiceInArea")
/// }
/// ```
public struct HandleCode: RawRepresentable, Sendable, Hashable, ExpressibleByStringLiteral, CustomStringConvertible {
    /// The code on the wire.
    public let rawValue: String

    /// Creates a code from its wire form.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// Creates a code from its wire form.
    public init(_ rawValue: String) { self.rawValue = rawValue }

    public init(stringLiteral value: String) { self.rawValue = value }

    public var description: String { rawValue }

    /// The task was performed.
    public static let success = HandleCode("success")
    /// The task was started and is still going on (answer this when it takes more than a few seconds).
    public static let inProgress = HandleCode("inProgress")
    /// The user continues the task in the app (see the user activity).
    public static let continueInApp = HandleCode("continueInApp")
    /// The task failed.
    public static let failure = HandleCode("failure")
    /// The task failed here; the user must continue in the app (see the user activity).
    public static let failureRequiringAppLaunch = HandleCode("failureRequiringAppLaunch")

    /// The standard codes every intent has: success, inProgress, continueInApp, failure, failureRequiringAppLaunch.
    public static let standard: [HandleCode] = [
        .success, .inProgress, .continueInApp, .failure, .failureRequiringAppLaunch,
    ]
}
