public import IntentKit

/// Request a ride (SiriKit's `INRequestRideIntent`).
public struct RequestRideIntent: Intent, Hashable {
    public static let intentType = "RequestRide"
    public static let intentDescription = "Book a ride from a pickup location to a drop-off location."
    public static let parameters: [IntentParameter<RequestRideIntent>] = [
        .init(
            "pickupLocation", \.pickupLocation,
            description: "Where to be picked up; when absent, the rider's current location.",
            unsupportedReasons: LocationUnsupportedReason.allCases.map(\.rawValue)
        ),
        .init(
            "dropOffLocation", \.dropOffLocation, required: true,
            description: "Where to go; must be inside the service area.",
            unsupportedReasons: LocationUnsupportedReason.allCases.map(\.rawValue)
        ),
        .init(
            "rideOptionName", \.rideOptionName,
            description: "The kind of ride: Economy (default), Comfort or XL.",
            unsupportedReasons: RequestRideHandler.UnsupportedReason.rideOptionReasons
        ),
        .init(
            "partySize", \.partySize,
            description: "Number of riders; 1 when absent (the fleet seats at most 8).", minimum: 1, maximum: 20,
            unsupportedReasons: RequestRideHandler.UnsupportedReason.partySizeReasons
        ),
        .init(
            "scheduledPickupTime", \.scheduledPickupTime,
            description: "When to be picked up (at least hour and minute); now when absent.",
            unsupportedReasons: RequestRideHandler.UnsupportedReason.pickupTimeReasons
        ),
    ]
    public static let handleCodes: [HandleCode] = HandleCode.standard + [.failureRequiringAppLaunchNoServiceInArea]

    public var identifier: String?
    /// Where to be picked up.
    public var pickupLocation: Placemark?
    /// Where to go.
    public var dropOffLocation: Placemark?
    /// The kind of ride.
    public var rideOptionName: String?
    /// Number of riders.
    public var partySize: Int?
    /// When to be picked up.
    public var scheduledPickupTime: IntentDateComponents?

    public init() {}

    /// Creates an intent with the given parameters.
    public init(
        pickupLocation: Placemark? = nil,
        dropOffLocation: Placemark? = nil,
        rideOptionName: String? = nil,
        partySize: Int? = nil,
        scheduledPickupTime: IntentDateComponents? = nil
    ) {
        self.pickupLocation = pickupLocation
        self.dropOffLocation = dropOffLocation
        self.rideOptionName = rideOptionName
        self.partySize = partySize
        self.scheduledPickupTime = scheduledPickupTime
    }
}

extension HandleCode {
    /// The ride cannot be booked because there is no service in the area (a `RequestRide` handle code).
    public static let failureRequiringAppLaunchNoServiceInArea = HandleCode("failureRequiringAppLaunchNoServiceInArea")
}
