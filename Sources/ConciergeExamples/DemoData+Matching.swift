public import IntentKit
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Why a person could not be resolved.
public enum ContactUnsupportedReason: String, Sendable, CaseIterable {
    /// No contact matches the name, handle or identifier.
    case noContactFound
}

/// Why a place could not be resolved.
public enum LocationUnsupportedReason: String, Sendable, CaseIterable {
    /// The place is outside the service area.
    case outsideServiceArea
    /// The place has no coordinates and its name is not a known place.
    case unknownLocation
}

extension DemoData {
    /// Resolves a person against the demo contacts (see ``DemoData``).
    public static func resolveContact(_ person: Person?) -> ResolutionResult<Person> {
        guard let person else { return .needsValue }
        if let id = person.customIdentifier, let contact = contacts.first(where: { $0.id == id }) {
            return .success(contact.person)
        }
        if let handle = person.handle, let contact = contacts.first(where: { $0.handle == handle }) {
            return .success(contact.person)
        }
        let query = person.displayName.split(whereSeparator: \.isWhitespace).joined(separator: " ").lowercased()
        var matches = contacts.filter { $0.name.lowercased() == query }
        if matches.isEmpty {
            matches = contacts.filter { contact in
                contact.name.lowercased().split(separator: " ").contains { $0 == query }
            }
        }
        switch matches.count {
        case 0:
            return .unsupported(ContactUnsupportedReason.noContactFound)
        case 1:
            return .success(matches[0].person)
        default:
            let favorites = matches.filter(\.isFavorite)
            if favorites.count == 1 { return .confirmationRequired(favorites[0].person) }
            return .disambiguation(matches.map(\.person))
        }
    }

    /// Resolves a place against the service area; a place with a known name but no coordinates gets them filled in.
    /// A missing place resolves as `missing`.
    public static func resolvePlace(_ place: Placemark?, missing: ResolutionResult<Placemark>)
        -> ResolutionResult<Placemark>
    {
        guard var place else { return missing }
        if place.latitude == nil || place.longitude == nil {
            guard let name = place.name?.lowercased(),
                let known = places.first(where: { $0.name?.lowercased() == name })
            else { return .unsupported(LocationUnsupportedReason.unknownLocation) }
            place.name = known.name
            place.address = place.address ?? known.address
            place.latitude = known.latitude
            place.longitude = known.longitude
        }
        guard isInsideServiceArea(place) else { return .unsupported(LocationUnsupportedReason.outsideServiceArea) }
        return .success(place)
    }

    /// Whether a placemark with coordinates lies within the service area.
    public static func isInsideServiceArea(_ place: Placemark) -> Bool {
        guard let distance = distanceToCenterKilometers(place) else { return false }
        return distance <= serviceAreaRadiusKilometers
    }

    /// The great-circle distance from the service area's centre, or nil without coordinates.
    public static func distanceToCenterKilometers(_ place: Placemark) -> Double? {
        guard let latitude = place.latitude, let longitude = place.longitude else { return nil }
        let radians = Double.pi / 180
        let lat1 = serviceAreaCenter.latitude * radians
        let lat2 = latitude * radians
        let dLat = lat2 - lat1
        let dLon = (longitude - serviceAreaCenter.longitude) * radians
        let a = sin(dLat / 2) * sin(dLat / 2) + cos(lat1) * cos(lat2) * sin(dLon / 2) * sin(dLon / 2)
        return 6371.0 * 2 * atan2(a.squareRoot(), (1 - a).squareRoot())
    }

    private static let serial = Atomic<Int>(0)

    /// A new id such as `ride-3` (a process-wide counter: ids are unique within a worker process).
    static func nextID(_ prefix: String) -> String {
        "\(prefix)-\(serial.wrappingAdd(1, ordering: .relaxed).newValue)"
    }
}
