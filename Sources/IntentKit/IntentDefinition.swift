/// The definition of an intent type, as stored in `Schemas/intents/<IntentType>.json`: its parameters with their
/// types, its enumerations and its response codes. Clients in any language read these files; a Swift intent type
/// renders its own definition with ``init(describing:)``, so a test can prove the two agree.
///
/// ```json
/// {"intent": "RequestRide", "description": "...",
///  "parameters": [{"name": "dropOffLocation", "type": "placemark", "list": false, "required": true,
///                  "description": "...", "unsupportedReasons": ["outsideServiceArea"]}],
///  "enums": {},
///  "confirmCodes": ["ready", "failure", "failureRequiringAppLaunch"],
///  "handleCodes": ["success", "inProgress", "continueInApp", "failure", "failureRequiringAppLaunch"]}
/// ```
public struct IntentDefinition: Sendable, Hashable, Codable {
    /// One parameter of a definition.
    public struct Parameter: Sendable, Hashable, Codable {
        /// The parameter's name.
        public var name: String
        /// The (element) type name: one of ``ParameterType/typeNames``.
        public var type: String
        /// Whether the value is a list of `type`.
        public var list: Bool
        /// Whether the handler needs a value.
        public var required: Bool
        /// A one-line description.
        public var description: String
        /// The smallest accepted value of a numeric parameter.
        public var minimum: Double?
        /// The largest accepted value of a numeric parameter.
        public var maximum: Double?
        /// For `type` `enum`: the name of the enumeration in ``IntentDefinition/enums``.
        public var enumName: String?
        /// The reasons an unsupported resolution may carry.
        public var unsupportedReasons: [String]?

        enum CodingKeys: String, CodingKey {
            case name, type, list, required, description, minimum, maximum
            case enumName = "enum"
            case unsupportedReasons
        }

        /// Creates a parameter definition.
        public init(
            name: String,
            type: String,
            list: Bool = false,
            required: Bool = false,
            description: String = "",
            minimum: Double? = nil,
            maximum: Double? = nil,
            enumName: String? = nil,
            unsupportedReasons: [String]? = nil
        ) {
            self.name = name
            self.type = type
            self.list = list
            self.required = required
            self.description = description
            self.minimum = minimum
            self.maximum = maximum
            self.enumName = enumName
            self.unsupportedReasons = unsupportedReasons
        }
    }

    /// The intent type name.
    public var intent: String
    /// A one-line description.
    public var description: String
    /// The parameters, in order.
    public var parameters: [Parameter]
    /// The enumerations used by the parameters: name to case names, in order.
    public var enums: [String: [String]]
    /// The codes a confirm may answer with.
    public var confirmCodes: [String]
    /// The codes a handle may answer with.
    public var handleCodes: [String]
    /// The definition's version, 1 unless the file says `"version"`: a changed definition gets a new one, so that a
    /// broker allowing rolling upgrades serves old and new workers side by side (PROTOCOL.md section 5.16).
    public var version: Int = 1
    /// How often a conversation the broker carries may ask about one parameter of this intent before it ends
    /// `too-many-asks` (PROTOCOL.md section 4.11), 1 to 100; nil for the broker's default.
    public var maxAsks: Int?

    private enum CodingKeys: String, CodingKey {
        case intent, description, parameters, enums, confirmCodes, handleCodes, version, maxAsks
    }

    /// Decodes a definition; `version` may be absent (1).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        intent = try container.decode(String.self, forKey: .intent)
        description = try container.decode(String.self, forKey: .description)
        parameters = try container.decode([Parameter].self, forKey: .parameters)
        enums = try container.decode([String: [String]].self, forKey: .enums)
        confirmCodes = try container.decode([String].self, forKey: .confirmCodes)
        handleCodes = try container.decode([String].self, forKey: .handleCodes)
        version = try container.decodeIfPresent(Int.self, forKey: .version) ?? 1
        maxAsks = try container.decodeIfPresent(Int.self, forKey: .maxAsks)
    }

    /// Creates a definition.
    public init(
        intent: String,
        description: String = "",
        parameters: [Parameter],
        enums: [String: [String]] = [:],
        confirmCodes: [String] = ConfirmCode.standard.map(\.rawValue),
        handleCodes: [String] = HandleCode.standard.map(\.rawValue)
    ) {
        self.intent = intent
        self.description = description
        self.parameters = parameters
        self.enums = enums
        self.confirmCodes = confirmCodes
        self.handleCodes = handleCodes
    }

    /// The type of a parameter as a ``ParameterType`` (nil for an unknown type name or enumeration).
    public func parameterType(of parameter: Parameter) -> ParameterType? {
        let element: ParameterType
        switch parameter.type {
        case "string": element = .string
        case "integer": element = .integer
        case "double": element = .double
        case "boolean": element = .boolean
        case "date": element = .date
        case "dateComponents": element = .dateComponents
        case "currencyAmount": element = .currencyAmount
        case "person": element = .person
        case "placemark": element = .placemark
        case "enum":
            guard let name = parameter.enumName, let cases = enums[name] else { return nil }
            element = .enumeration(name: name, cases: cases)
        default: return nil
        }
        return parameter.list ? .list(element) : element
    }
}
