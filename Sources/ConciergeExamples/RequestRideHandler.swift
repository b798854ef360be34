public import IntentKit

/// Handles ``RequestRideIntent`` against the demo service area (see ``DemoData``).
///
/// Resolution:
/// - `dropOffLocation`: missing -> `needsValue`; inside the service area -> `success` (a known place name without
///   coordinates gets them filled in and written back); outside -> `unsupported(outsideServiceArea)`; an unknown
///   name without coordinates -> `unsupported(unknownLocation)`.
/// - `pickupLocation`: missing -> `notRequired` (the rider's current location is used); else as the drop-off.
/// - `rideOptionName`: missing -> `notRequired` (Economy); a known option in any case -> `success` with its
///   canonical name; else `unsupported(unknownRideOption)`.
/// - `partySize`: missing -> `notRequired` (1); 1...8 -> `success`; 9...20 -> `unsupported(partySizeOutOfRange)`
///   (outside the declared 1...20, validation answers `out-of-range` before the handler runs).
/// - `scheduledPickupTime`: missing -> `notRequired` (now); with a valid hour and minute -> `success`; else
///   `unsupported(invalidPickupTime)`.
///
/// Confirm is `ready` with the ride option and ETA as data. Handle books the ride: `success` with `rideId`,
/// `etaMinutes`, `rideOption` and `partySize`; without a drop-off inside the service area it answers
/// `failureRequiringAppLaunchNoServiceInArea`.
public struct RequestRideHandler: IntentHandler {
    /// Unsupported reasons of the ride parameters other than locations.
    public enum UnsupportedReason: String, Sendable, CaseIterable {
        /// The ride option is not offered.
        case unknownRideOption
        /// The party size is outside 1...8.
        case partySizeOutOfRange
        /// The pickup time lacks an hour and minute or has a field out of range.
        case invalidPickupTime
    }

    /// Creates a handler.
    public init() {}

    public func resolve(intent: RequestRideIntent, context: HandlerContext) async throws -> Resolutions<
        RequestRideIntent
    > {
        var resolutions = Resolutions<RequestRideIntent>()
        resolutions[\.dropOffLocation] = DemoData.resolvePlace(intent.dropOffLocation, missing: .needsValue)
        resolutions[\.pickupLocation] = DemoData.resolvePlace(intent.pickupLocation, missing: .notRequired)
        if let name = intent.rideOptionName {
            if let option = DemoData.rideOptions.first(where: { $0.lowercased() == name.lowercased() }) {
                resolutions[\.rideOptionName] = .success(option)
            } else {
                resolutions[\.rideOptionName] = .unsupported(UnsupportedReason.unknownRideOption)
            }
        } else {
            resolutions[\.rideOptionName] = .notRequired
        }
        if let size = intent.partySize {
            resolutions[\.partySize] =
                DemoData.partySizes.contains(size)
                ? .success(size) : .unsupported(UnsupportedReason.partySizeOutOfRange)
        } else {
            resolutions[\.partySize] = .notRequired
        }
        if let time = intent.scheduledPickupTime {
            resolutions[\.scheduledPickupTime] =
                Self.isValidPickupTime(time) ? .success(time) : .unsupported(UnsupportedReason.invalidPickupTime)
        } else {
            resolutions[\.scheduledPickupTime] = .notRequired
        }
        return resolutions
    }

    public func confirm(intent: RequestRideIntent, context: HandlerContext) async throws -> ConfirmResponse<
        RequestRideIntent
    > {
        ConfirmResponse(
            code: .ready,
            data: [
                "rideOption": .string(intent.rideOptionName ?? DemoData.rideOptions[0]),
                "etaMinutes": .int(Int64(Self.etaMinutes(pickup: intent.pickupLocation))),
            ]
        )
    }

    public func handle(intent: RequestRideIntent, context: HandlerContext) async throws -> HandleResponse<
        RequestRideIntent
    > {
        guard case .success = DemoData.resolvePlace(intent.dropOffLocation, missing: .needsValue) else {
            return HandleResponse(
                code: .failureRequiringAppLaunchNoServiceInArea,
                message: "the drop-off location is missing or outside the service area"
            )
        }
        return HandleResponse(
            code: .success,
            data: [
                "rideId": .string(DemoData.nextID("ride")),
                "etaMinutes": .int(Int64(Self.etaMinutes(pickup: intent.pickupLocation))),
                "rideOption": .string(intent.rideOptionName ?? DemoData.rideOptions[0]),
                "partySize": .int(Int64(intent.partySize ?? 1)),
            ]
        )
    }

    /// Minutes until the car arrives: 4 at the current location, else 3 plus one per kilometre from the centre.
    static func etaMinutes(pickup: Placemark?) -> Int {
        guard let pickup, let distance = DemoData.distanceToCenterKilometers(pickup) else { return 4 }
        return 3 + Int(distance.rounded())
    }

    static func isValidPickupTime(_ time: IntentDateComponents) -> Bool {
        guard let hour = time.hour, let minute = time.minute, (0...23).contains(hour), (0...59).contains(minute)
        else { return false }
        if let month = time.month, !(1...12).contains(month) { return false }
        if let day = time.day, !(1...31).contains(day) { return false }
        if let second = time.second, !(0...59).contains(second) { return false }
        return true
    }
}
