import IntentCodegen
import IntentKit
import Testing

/// A definition file of intent `Probe` with the given parts (all valid by default).
func probe(
    intent: String = "Probe",
    parameters: String = #"[{"name": "a", "type": "string", "list": false, "required": false, "description": ""}]"#,
    enums: String = "{}",
    confirmCodes: String = #"["ready", "failure", "failureRequiringAppLaunch"]"#,
    handleCodes: String = #"["success", "inProgress", "continueInApp", "failure", "failureRequiringAppLaunch"]"#,
    extra: String = ""
) -> String {
    #"{"intent": "\#(intent)", "description": "", "parameters": \#(parameters), "enums": \#(enums), "#
        + #""confirmCodes": \#(confirmCodes), "handleCodes": \#(handleCodes)\#(extra)}"#
}

/// One parameter object with the given extra members (`type` string unless given).
func parameter(_ members: String = "", name: String = "a", type: String = "string") -> String {
    #"{"name": "\#(name)", "type": "\#(type)", "list": false, "required": false, "description": ""\#(members)}"#
}

/// An invalid definition, the exact diagnostics the generator gives, and whether IntentKit's loader (less strict
/// than the generator about identifiers, bounds and names Swift needs) rejects it too.
struct InvalidCase: Sendable, CustomTestStringConvertible {
    let label: String
    let text: String
    let errors: [String]
    let intentKitRejects: Bool

    var testDescription: String { label }
}

let file = "Intents/Probe.intent.json"

let invalidCases: [InvalidCase] = [
    InvalidCase(
        label: "unknown type", text: probe(parameters: "[\(parameter(type: "colour"))]"),
        errors: [
            "\(file): error: parameters[0].type: unknown type \"colour\" (expected one of string, integer, double, "
                + "boolean, date, dateComponents, currencyAmount, person, placemark, enum)"
        ], intentKitRejects: true),
    InvalidCase(
        label: "duplicate parameter", text: probe(parameters: "[\(parameter()), \(parameter(type: "integer"))]"),
        errors: [#"\#(file): error: parameters[1].name: parameter "a" appears twice (first at parameters[0])"#],
        intentKitRejects: true),
    InvalidCase(
        label: "missing key",
        text: probe(parameters: #"[{"name": "a", "list": false, "required": false, "description": ""}]"#),
        errors: ["\(file): error: parameters[0].type: required key is missing"], intentKitRejects: true),
    InvalidCase(
        label: "bad enum case identifier",
        text: probe(
            parameters: "[\(parameter(#", "enum": "E""#, type: "enum"))]", enums: #"{"E": ["ok", "not-ok"]}"#),
        errors: [#"\#(file): error: enums.E[1]: case "not-ok" is not an identifier ([A-Za-z_][A-Za-z0-9_]*)"#],
        intentKitRejects: false),
    InvalidCase(
        label: "minimum above maximum",
        text: probe(parameters: "[\(parameter(#", "minimum": 5, "maximum": 1.5"#, type: "integer"))]"),
        errors: ["\(file): error: parameters[0].minimum: minimum 5 is greater than maximum 1.5"],
        intentKitRejects: false),
    InvalidCase(
        label: "bounds on a string", text: probe(parameters: "[\(parameter(#", "maximum": 3"#))]"),
        errors: [
            #"\#(file): error: parameters[0].maximum: bounds apply to integer and double parameters only, not "string""#
        ],
        intentKitRejects: true),
    InvalidCase(
        label: "undefined enumeration", text: probe(parameters: "[\(parameter(#", "enum": "E""#, type: "enum"))]"),
        errors: [#"\#(file): error: parameters[0].enum: no enumeration "E" in "enums""#], intentKitRejects: true),
    InvalidCase(
        label: "enum type without enum", text: probe(parameters: "[\(parameter(type: "enum"))]"),
        errors: [
            #"\#(file): error: parameters[0].enum: required key is missing: type "enum" names an entry of "enums""#
        ], intentKitRejects: true),
    InvalidCase(
        label: "unused enumeration", text: probe(enums: #"{"E": ["x"]}"#),
        errors: [#"\#(file): error: enums.E: enumeration "E" is not used by any parameter"#], intentKitRejects: true),
    InvalidCase(
        label: "missing standard code", text: probe(confirmCodes: #"["ready", "failure"]"#),
        errors: [#"\#(file): error: confirmCodes: lacks the standard code "failureRequiringAppLaunch""#],
        intentKitRejects: true),
    InvalidCase(
        label: "duplicate code",
        text: probe(confirmCodes: #"["ready", "failure", "failureRequiringAppLaunch", "ready"]"#),
        errors: [#"\#(file): error: confirmCodes[3]: code "ready" appears twice (first at confirmCodes[0])"#],
        intentKitRejects: true),
    InvalidCase(
        label: "unknown key", text: probe(extra: #", "colour": 1"#),
        errors: [
            "\(file): error: colour: unknown key (allowed: intent, description, version, maxAsks, parameters, enums, "
                + "confirmCodes, handleCodes)"
        ], intentKitRejects: true),
    InvalidCase(
        label: "wrong JSON type",
        text: probe(
            parameters: #"[{"name": "a", "type": "string", "list": "no", "required": false, "description": ""}]"#),
        errors: ["\(file): error: parameters[0].list: must be true or false, not a string"], intentKitRejects: true),
    InvalidCase(
        label: "reserved parameter name", text: probe(parameters: "[\(parameter(name: "identifier"))]"),
        errors: [
            #"\#(file): error: parameters[0].name: "identifier" is reserved: the generated code declares a member of that name"#
        ], intentKitRejects: false),
    InvalidCase(
        label: "file named after another intent", text: probe(intent: "Other"),
        errors: [
            #"\#(file): error: intent: "Other" is defined in "Probe.intent.json"; name the file "Other.intent.json""#
        ],
        intentKitRejects: false),
    InvalidCase(
        label: "invalid JSON", text: #"{"intent": "Probe","#,
        errors: ["\(file):1:20: error: not valid JSON (unexpected-end)"], intentKitRejects: true),
    InvalidCase(
        label: "every problem at once",
        text: probe(
            parameters: #"[{"name": "9a", "type": "colour", "list": false, "required": false}]"#,
            handleCodes: #"["success"]"#),
        errors: [
            #"\#(file): error: parameters[0].name: "9a" is not an identifier ([A-Za-z_][A-Za-z0-9_]*)"#,
            "\(file): error: parameters[0].type: unknown type \"colour\" (expected one of string, integer, double, "
                + "boolean, date, dateComponents, currencyAmount, person, placemark, enum)",
            "\(file): error: parameters[0].description: required key is missing",
            #"\#(file): error: handleCodes: lacks the standard code "inProgress""#,
            #"\#(file): error: handleCodes: lacks the standard code "continueInApp""#,
            #"\#(file): error: handleCodes: lacks the standard code "failure""#,
            #"\#(file): error: handleCodes: lacks the standard code "failureRequiringAppLaunch""#,
        ], intentKitRejects: true),
]

@Suite("Invalid definitions")
struct InvalidDefinitionTests {
    @Test("an invalid definition gives its exact diagnostics", arguments: invalidCases)
    func invalidDefinitionGivesItsExactDiagnostics(_ invalid: InvalidCase) {
        let error = #expect(throws: IntentCodegenError.self) {
            try IntentSourceGenerator.generate([.init(file: file, bytes: Array(invalid.text.utf8))])
        }
        #expect(error?.diagnostics.map(\.description) == invalid.errors)
    }

    @Test("IntentKit's loader agrees where it checks the same rule", arguments: invalidCases)
    func intentKitLoaderAgrees(_ invalid: InvalidCase) {
        let loaded = Result { try IntentDefinition(jsonBytes: Array(invalid.text.utf8)) }
        #expect((try? loaded.get()) == nil ? invalid.intentKitRejects : !invalid.intentKitRejects)
    }

    @Test func theValidProbeIsValid() throws {
        #expect(try IntentSourceGenerator.generate([.init(file: file, bytes: Array(probe().utf8))]).count == 1)
    }
}
