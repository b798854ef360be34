public import IntentKit

#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif

/// The demo data the example handlers work with (also in `Docs/DEMO-DATA.md`). Nothing is stored: every handler
/// reads these constants afresh on every call, as SiriKit handlers should.
///
/// **Contacts** (`SendMessage.recipient`, `SendPayment.payee`). A person is matched by ``Person/customIdentifier``
/// first (a known id skips name matching), then by ``Person/handle``, then by name, case-insensitively: the full name,
/// else the first or the last name.
///
/// | id | name | handle | favourite |
/// |---|---|---|---|
/// | `contact-anna` | Anna Schmidt | +49 30 5550101 (phone) | no |
/// | `contact-john-appleseed` | John Appleseed | john.appleseed@example.com (email) | no |
/// | `contact-john-doe` | John Doe | +1 415 555 0102 (phone) | no |
/// | `contact-kate-bell` | Kate Bell | +1 415 555 0103 (phone) | yes |
/// | `contact-kate-zhang` | Kate Zhang | kate.zhang@example.com (email) | no |
///
/// One match resolves `success` (with `customIdentifier` set, written back into the intent); "John" matches two
/// equally likely contacts: `disambiguation` with both; "Kate" matches two of which one is a favourite:
/// `confirmationRequired(Kate Bell)`; no match: `unsupported` with reason `noContactFound`; no person: `needsValue`.
///
/// **Service area** (`RequestRide`): within 25 km of San Francisco (37.7749, -122.4194). A placemark with coordinates
/// is checked directly; one with only a name is looked up in the places below (case-insensitively) and resolved with
/// the coordinates written back; an unknown name without coordinates is `unsupported` (`unknownLocation`).
///
/// | place | latitude, longitude | inside |
/// |---|---|---|
/// | Ferry Building | 37.7955, -122.3937 | yes |
/// | Golden Gate Park | 37.7694, -122.4862 | yes |
/// | SFO | 37.6213, -122.3790 | yes |
/// | Oakland Airport | 37.7126, -122.2197 | yes |
/// | San Jose | 37.3382, -121.8863 | no |
/// | Napa | 38.2975, -122.2869 | no |
///
/// **Ride options**: Economy (the default), Comfort, XL. **Party size**: 1 to 8.
///
/// **Workouts** (`StartWorkout`): the demo device has location services *off*, so outdoor workouts cannot be tracked.
///
/// **Payments** (`SendPayment`): currencies EUR and USD; at most 10000 per payment; the demo account holds 2500 in
/// either currency, so larger payments are confirmed with `failureInsufficientFunds`.
public enum DemoData {
    /// A contact in the demo address book.
    public struct Contact: Sendable, Hashable {
        /// The contact's record id, used as ``Person/customIdentifier``.
        public let id: String
        /// The full name.
        public let name: String
        /// A phone number or email address.
        public let handle: String
        /// The kind of ``handle``.
        public let handleType: Person.HandleType
        /// Whether the user marked the contact as a favourite.
        public let isFavorite: Bool

        /// The contact as a resolved ``Person``, with its id as custom identifier.
        public var person: Person {
            Person(displayName: name, handle: handle, handleType: handleType, customIdentifier: id)
        }
    }

    /// The demo address book.
    public static let contacts: [Contact] = [
        Contact(
            id: "contact-anna", name: "Anna Schmidt", handle: "+49 30 5550101", handleType: .phoneNumber,
            isFavorite: false),
        Contact(
            id: "contact-john-appleseed", name: "John Appleseed", handle: "john.appleseed@example.com",
            handleType: .emailAddress, isFavorite: false
        ),
        Contact(
            id: "contact-john-doe", name: "John Doe", handle: "+1 415 555 0102", handleType: .phoneNumber,
            isFavorite: false),
        Contact(
            id: "contact-kate-bell", name: "Kate Bell", handle: "+1 415 555 0103", handleType: .phoneNumber,
            isFavorite: true),
        Contact(
            id: "contact-kate-zhang", name: "Kate Zhang", handle: "kate.zhang@example.com", handleType: .emailAddress,
            isFavorite: false
        ),
    ]

    /// The centre of the ride service area: San Francisco.
    public static let serviceAreaCenter = (latitude: 37.7749, longitude: -122.4194)

    /// The radius of the ride service area in kilometres.
    public static let serviceAreaRadiusKilometers = 25.0

    /// Named places a placemark without coordinates is looked up in.
    public static let places: [Placemark] = [
        Placemark(
            name: "Ferry Building", address: "1 Ferry Building, San Francisco, CA 94111", latitude: 37.7955,
            longitude: -122.3937),
        Placemark(
            name: "Golden Gate Park", address: "San Francisco, CA 94122", latitude: 37.7694, longitude: -122.4862),
        Placemark(
            name: "SFO", address: "San Francisco International Airport, CA 94128", latitude: 37.6213,
            longitude: -122.3790),
        Placemark(
            name: "Oakland Airport", address: "1 Airport Dr, Oakland, CA 94621", latitude: 37.7126, longitude: -122.2197
        ),
        Placemark(name: "San Jose", address: "San Jose, CA", latitude: 37.3382, longitude: -121.8863),
        Placemark(name: "Napa", address: "Napa, CA", latitude: 38.2975, longitude: -122.2869),
    ]

    /// The ride options; the first is the default.
    public static let rideOptions = ["Economy", "Comfort", "XL"]

    /// The allowed party sizes.
    public static let partySizes = 1...8

    /// Whether the demo device has location services on (it has not).
    public static let locationServicesEnabled = false

    /// The currencies payments can be made in.
    public static let paymentCurrencies = ["EUR", "USD"]

    /// The largest amount of one payment.
    public static let maximumPayment = Decimal(10000)

    /// The demo account's balance (in each currency).
    public static let accountBalance = Decimal(2500)
}
