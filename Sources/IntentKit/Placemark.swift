public import ConciergeJSON

/// A place, such as a pickup or drop-off location (SiriKit's `CLPlacemark`).
///
/// JSON: `{"name"?: s, "address"?: s, "latitude"?: n, "longitude"?: n}`; every field is optional, so a client may
/// send just what the user said (a name) and the handler may write the coordinates back when it resolves the place.
public struct Placemark: IntentScalarValue {
    /// A name such as "Ferry Building".
    public var name: String?
    /// A postal address on one line.
    public var address: String?
    /// Latitude in degrees (WGS 84).
    public var latitude: Double?
    /// Longitude in degrees (WGS 84).
    public var longitude: Double?

    /// Creates a placemark; every field defaults to nil.
    public init(name: String? = nil, address: String? = nil, latitude: Double? = nil, longitude: Double? = nil) {
        self.name = name
        self.address = address
        self.latitude = latitude
        self.longitude = longitude
    }

    public static var intentParameterType: ParameterType { .placemark }

    static let keys = ["name", "address", "latitude", "longitude"]

    public init(intentJSON json: JSONValue) throws(IntentValueError) {
        var reader = try _ObjectReader(json, expected: "placemark object")
        self.init(
            name: try reader.optionalString("name"),
            address: try reader.optionalString("address"),
            latitude: try reader.optionalDouble("latitude"),
            longitude: try reader.optionalDouble("longitude")
        )
        try reader.finish(known: Self.keys)
    }

    public var intentJSON: JSONValue {
        var object: JSONObject = [:]
        if let name { object["name"] = .string(name) }
        if let address { object["address"] = .string(address) }
        if let latitude { object["latitude"] = .double(latitude) }
        if let longitude { object["longitude"] = .double(longitude) }
        return .object(object)
    }
}
