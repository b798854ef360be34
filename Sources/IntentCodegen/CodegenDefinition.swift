/// A checked intent definition (the format of `Schemas/PROTOCOL.md`, section 11.11), ready for code generation.
///
/// Read one with ``init(jsonBytes:file:)``, which checks everything the format requires plus what Swift needs
/// (identifiers that the generated names can use), and reports every problem with its JSON path.
public struct CodegenDefinition: Sendable, Hashable {
    /// The value type of a parameter (a list's element type).
    public enum ValueType: String, Sendable, Hashable, CaseIterable {
        case string, integer, double, boolean, date, dateComponents, currencyAmount, person, placemark
        case enumeration = "enum"

        /// The Swift type IntentKit uses for a value of this type (`nil` for an enumeration: its own name).
        var swiftType: String? {
            switch self {
            case .string: "String"
            case .integer: "Int"
            case .double: "Double"
            case .boolean: "Bool"
            case .date: "Date"
            case .dateComponents: "IntentDateComponents"
            case .currencyAmount: "CurrencyAmount"
            case .person: "Person"
            case .placemark: "Placemark"
            case .enumeration: nil
            }
        }
    }

    /// One parameter.
    public struct Parameter: Sendable, Hashable {
        /// The name on the wire, also the Swift property's name.
        public var name: String
        /// The value (element) type.
        public var type: ValueType
        /// Whether the value is a list of ``type``.
        public var list: Bool
        /// Whether the handler needs a value.
        public var required: Bool
        /// A one-line description.
        public var description: String
        /// The smallest accepted value of a numeric parameter.
        public var minimum: Double?
        /// The largest accepted value of a numeric parameter.
        public var maximum: Double?
        /// For ``ValueType/enumeration``: the enumeration's name.
        public var enumName: String?
        /// The reasons an unsupported resolution may carry; nil when the file has no `unsupportedReasons`.
        public var unsupportedReasons: [String]?

        /// Creates a parameter.
        public init(
            name: String, type: ValueType, list: Bool = false, required: Bool = false, description: String = "",
            minimum: Double? = nil, maximum: Double? = nil, enumName: String? = nil, unsupportedReasons: [String]? = nil
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

    /// An enumeration: its name and cases, in file order.
    public struct Enumeration: Sendable, Hashable {
        /// The enumeration's name, also the Swift type's name.
        public var name: String
        /// The case names, in order.
        public var cases: [String]

        /// Creates an enumeration.
        public init(name: String, cases: [String]) {
            self.name = name
            self.cases = cases
        }
    }

    /// The intent type's name on the wire; the Swift struct is named this plus `Intent`.
    public var intent: String
    /// A one-line description.
    public var description: String
    /// The parameters, in order.
    public var parameters: [Parameter]
    /// The enumerations, in file order.
    public var enums: [Enumeration]
    /// The codes a confirm may answer with, in order.
    public var confirmCodes: [String]
    /// The codes a handle may answer with, in order.
    public var handleCodes: [String]
    /// The definition's `version` (1 when the file has none): workers announce it (PROTOCOL.md section 5.16).
    public var version = 1
    /// The definition's `maxAsks` (nil when the file has none): the re-prompt bound of conversations (PROTOCOL.md
    /// section 4.11).
    public var maxAsks: Int?

    /// Creates a definition (unchecked: ``init(jsonBytes:file:)`` is the checked way in).
    public init(
        intent: String, description: String, parameters: [Parameter], enums: [Enumeration],
        confirmCodes: [String] = standardConfirmCodes, handleCodes: [String] = standardHandleCodes
    ) {
        self.intent = intent
        self.description = description
        self.parameters = parameters
        self.enums = enums
        self.confirmCodes = confirmCodes
        self.handleCodes = handleCodes
    }

    /// The confirm codes every definition lists (IntentKit's `ConfirmCode.standard`).
    public static let standardConfirmCodes = ["ready", "failure", "failureRequiringAppLaunch"]
    /// The handle codes every definition lists (IntentKit's `HandleCode.standard`).
    public static let standardHandleCodes = [
        "success", "inProgress", "continueInApp", "failure", "failureRequiringAppLaunch",
    ]

    /// The name of the generated Swift struct: ``intent`` plus `Intent`, e.g. `SendMessageIntent`.
    public var swiftTypeName: String { intent + "Intent" }

    /// The codes beyond the standard ones, confirm codes first (the generated static members of `ConfirmCode`
    /// and `HandleCode`).
    public var customConfirmCodes: [String] { confirmCodes.filter { !Self.standardConfirmCodes.contains($0) } }
    /// The handle codes beyond the standard ones.
    public var customHandleCodes: [String] { handleCodes.filter { !Self.standardHandleCodes.contains($0) } }
}
