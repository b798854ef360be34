/// Resolves, confirms and handles one intent type (SiriKit's `...IntentHandling` protocols).
///
/// A fresh handler is made for every job (see ``HandlerProvider/register(_:)``), so keep no state between calls:
/// look up what you need afresh each time. Only ``handle(intent:context:)`` is required; the defaults resolve every
/// parameter to `success(value)` / `notRequired` and confirm with ``ConfirmCode/ready``.
///
/// ```swift
/// struct RequestRideHandler: IntentHandler {
///     func resolve(intent: RequestRideIntent, context: HandlerContext) async throws -> Resolutions<RequestRideIntent> {
///         var resolutions = Resolutions<RequestRideIntent>()
///         if let place = intent.dropOffLocation {
///             resolutions[\.dropOffLocation] = isInsideServiceArea(place) ? .success(place) : .unsupported()
///         } else {
///             resolutions[\.dropOffLocation] = .needsValue
///         }
///         return resolutions
///     }
///     func handle(intent: RequestRideIntent, context: HandlerContext) async throws -> HandleResponse<RequestRideIntent> {
///         HandleResponse(code: .success, data: ["rideId": "ride-1"])
///     }
/// }
/// ```
public protocol IntentHandler: Sendable {
    /// The intent type this handler serves.
    associatedtype Intent: IntentKit.Intent

    /// Validates each parameter. Throwing makes the job fail with `handler-failed`.
    func resolve(intent: Intent, context: HandlerContext) async throws -> Resolutions<Intent>

    /// Final validation and readiness check. Throwing answers ``ConfirmCode/failure`` with the error as message.
    func confirm(intent: Intent, context: HandlerContext) async throws -> ConfirmResponse<Intent>

    /// Performs the task. Throwing answers ``HandleCode/failure`` with the error as message.
    func handle(intent: Intent, context: HandlerContext) async throws -> HandleResponse<Intent>
}

extension IntentHandler {
    /// Every parameter gets its default resolution: `success(value)` when it has a value, else `notRequired`.
    public func resolve(intent: Intent, context: HandlerContext) async throws -> Resolutions<Intent> {
        Resolutions()
    }

    /// Always ready.
    public func confirm(intent: Intent, context: HandlerContext) async throws -> ConfirmResponse<Intent> {
        .ready
    }
}
