/// A request with typed parameters, resolved, confirmed and handled by an ``IntentHandler``
/// (SiriKit's `INIntent`).
///
/// Declare an intent as a struct whose parameters are optional stored properties, and list them in
/// ``parameters`` with key paths. Prefer `static let` for ``parameters`` so the list is built once.
///
/// ```swift
/// public struct RequestRideIntent: Intent {
///     public static let intentType = "RequestRide"
///     public static let parameters: [IntentParameter<RequestRideIntent>] = [
///         .init("dropOffLocation", \.dropOffLocation, required: true),
///         .init("partySize", \.partySize, minimum: 1, maximum: 8),
///     ]
///     public var identifier: String?
///     public var dropOffLocation: Placemark?
///     public var partySize: Int?
///     public init() {}
/// }
/// ```
///
/// A missing parameter is `nil`; it is up to the handler's resolve to ask for it (``ResolutionResult/needsValue``).
public protocol Intent: Sendable {
    /// The intent's type name on the wire and in definition files, e.g. `RequestRide`.
    static var intentType: String { get }

    /// A one-line description for the intent definition. Defaults to the empty string.
    static var intentDescription: String { get }

    /// The parameters, in the order of the definition file.
    static var parameters: [IntentParameter<Self>] { get }

    /// The codes a confirm may answer with. Defaults to ``ConfirmCode/standard``.
    static var confirmCodes: [ConfirmCode] { get }

    /// The codes a handle may answer with. Defaults to ``HandleCode/standard``.
    static var handleCodes: [HandleCode] { get }

    /// The definition's version (its file's `"version"`), 1 by default: workers announce it with the definition
    /// (PROTOCOL.md section 5.16), and a changed definition needs a new one to be served beside the old.
    static var definitionVersion: Int { get }

    /// How often a conversation the broker carries may ask about one parameter (its file's `"maxAsks"`, 1 to 100);
    /// nil by default, for the broker's `--conversation-max-asks` (PROTOCOL.md section 4.11).
    static var conversationMaxAsks: Int? { get }

    /// An optional identifier the client gave the intent (e.g. for idempotency or logging).
    var identifier: String? { get set }

    /// Creates an intent with every parameter `nil`.
    init()
}

extension Intent {
    public static var intentDescription: String { "" }
    public static var confirmCodes: [ConfirmCode] { ConfirmCode.standard }
    public static var handleCodes: [HandleCode] { HandleCode.standard }
    public static var definitionVersion: Int { 1 }
    public static var conversationMaxAsks: Int? { nil }
}
