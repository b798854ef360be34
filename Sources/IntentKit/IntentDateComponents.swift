public import ConciergeJSON

/// Calendar fields of a date or time that need not be a full instant (like Foundation's `DateComponents`),
/// e.g. "tomorrow at 10:00" as `day`, `hour` and `minute`.
///
/// JSON: `{"year"?, "month"?, "day"?, "hour"?, "minute"?, "second"?, "timeZone"?}` with integer fields and
/// `timeZone` as an IANA identifier such as `"Europe/Berlin"`. Absent fields are `nil`. Values are not range-checked
/// here: a handler decides what it supports (and resolves the rest as unsupported).
public struct IntentDateComponents: IntentScalarValue {
    /// The year, e.g. 2026.
    public var year: Int?
    /// The month, 1...12.
    public var month: Int?
    /// The day of the month, 1...31.
    public var day: Int?
    /// The hour, 0...23.
    public var hour: Int?
    /// The minute, 0...59.
    public var minute: Int?
    /// The second, 0...59.
    public var second: Int?
    /// An IANA time zone identifier; nil means the handler's own choice (usually the user's zone).
    public var timeZone: String?

    /// Creates date components; every field defaults to nil.
    public init(
        year: Int? = nil,
        month: Int? = nil,
        day: Int? = nil,
        hour: Int? = nil,
        minute: Int? = nil,
        second: Int? = nil,
        timeZone: String? = nil
    ) {
        self.year = year
        self.month = month
        self.day = day
        self.hour = hour
        self.minute = minute
        self.second = second
        self.timeZone = timeZone
    }

    public static var intentParameterType: ParameterType { .dateComponents }

    static let keys = ["year", "month", "day", "hour", "minute", "second", "timeZone"]

    public init(intentJSON json: JSONValue) throws(IntentValueError) {
        var reader = try _ObjectReader(json, expected: "date components object")
        self.init(
            year: try reader.optionalInt("year"),
            month: try reader.optionalInt("month"),
            day: try reader.optionalInt("day"),
            hour: try reader.optionalInt("hour"),
            minute: try reader.optionalInt("minute"),
            second: try reader.optionalInt("second"),
            timeZone: try reader.optionalString("timeZone")
        )
        try reader.finish(known: Self.keys)
    }

    public var intentJSON: JSONValue {
        var object: JSONObject = [:]
        if let year { object["year"] = .int(Int64(year)) }
        if let month { object["month"] = .int(Int64(month)) }
        if let day { object["day"] = .int(Int64(day)) }
        if let hour { object["hour"] = .int(Int64(hour)) }
        if let minute { object["minute"] = .int(Int64(minute)) }
        if let second { object["second"] = .int(Int64(second)) }
        if let timeZone { object["timeZone"] = .string(timeZone) }
        return .object(object)
    }
}
