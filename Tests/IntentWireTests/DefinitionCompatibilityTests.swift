import ConciergeJSON
import IntentWire
import Testing

/// Section 5.18: which later definitions can serve the requests of an earlier one, and `Type@N` in F3.
@Suite struct DefinitionCompatibilityTests {
    static let base: JSONValue = try! JSONValue.parse(
        Array(
            #"""
            {"intent": "Order", "version": 1,
             "parameters": [
               {"name": "size", "type": "enum", "list": false, "required": true, "enum": "Size"},
               {"name": "count", "type": "integer", "list": false, "required": false, "minimum": 1, "maximum": 10}],
             "enums": {"Size": ["small", "large"]},
             "confirmCodes": ["ready", "failure"], "handleCodes": ["success", "failure"]}
            """#.utf8))

    /// `base` with `change` applied to its JSON object.
    func changed(_ change: (inout JSONObject) -> Void) -> JSONValue {
        var object = Self.base.objectValue!
        change(&object)
        return .object(object)
    }

    func parameters(_ edit: (inout [JSONValue]) -> Void) -> JSONValue {
        changed { object in
            var list = object["parameters"]!.arrayValue!
            edit(&list)
            object["parameters"] = .array(list)
        }
    }

    func parameter(_ index: Int, _ key: String, _ value: JSONValue?) -> JSONValue {
        parameters { list in
            var parameter = list[index].objectValue!
            parameter[key] = value
            list[index] = .object(parameter)
        }
    }

    @Test func additiveChangesAreCompatible() {
        let optional: JSONValue = ["name": "note", "type": "string", "list": false, "required": false]
        #expect(DefinitionCompatibility.isCompatible(parameters { $0.append(optional) }, with: Self.base))
        #expect(
            DefinitionCompatibility.isCompatible(
                changed { $0["enums"] = ["Size": ["small", "large", "huge"]] }, with: Self.base))
        #expect(
            DefinitionCompatibility.isCompatible(
                changed { $0["handleCodes"] = ["success", "failure", "later"] }, with: Self.base))
        #expect(DefinitionCompatibility.isCompatible(parameter(0, "required", false), with: Self.base))
        #expect(DefinitionCompatibility.isCompatible(parameter(1, "maximum", 20), with: Self.base))
        #expect(DefinitionCompatibility.isCompatible(parameter(1, "description", "How many."), with: Self.base))
        #expect(DefinitionCompatibility.isCompatible(Self.base, with: Self.base))
    }

    @Test func breakingChangesAreNot() {
        let required: JSONValue = ["name": "note", "type": "string", "list": false, "required": true]
        let cases: [(JSONValue, String)] = [
            (parameters { $0.append(required) }, "new parameter note is required"),
            (parameters { $0.removeLast() }, "parameter count was removed"),
            (parameter(1, "type", "double"), "parameter count: its type changed from integer to double"),
            (parameter(1, "list", true), "parameter count: its list changed"),
            (parameter(1, "required", true), "parameter count became required"),
            (parameter(1, "maximum", 5), "parameter count: its maximum fell"),
            (parameter(1, "minimum", 2), "parameter count: its minimum rose"),
            (changed { $0["enums"] = ["Size": ["small"]] }, "enumeration Size lost its case large"),
            (changed { $0["confirmCodes"] = ["ready"] }, "confirmCodes lost the code failure"),
        ]
        for (later, reason) in cases {
            let found = DefinitionCompatibility.incompatibility(of: later, with: Self.base)
            #expect(found?.hasPrefix(reason) == true, "\(found ?? "compatible"), expected \(reason)")
        }
    }

    @Test func anIntentTypeMayNameTheVersionItAsksFor() {
        func split(_ text: String) -> (String, Int?) {
            let (type, version) = ClientRequest.splitVersion(Array(text.utf8))
            return (String(decoding: type, as: UTF8.self), version)
        }
        #expect(split("Order@2") == ("Order", 2))
        #expect(split("Order@2147483647") == ("Order", 2_147_483_647))
        #expect(split("Order") == ("Order", nil))
        // Anything else is a type name no worker serves (unknown-intent), never a version.
        for text in ["Order@", "Order@0", "Order@02", "Order@-1", "Order@2x", "@2", "Order@2147483648"] {
            #expect(split(text) == (text, nil), "\(text)")
        }
    }

    @Test func theDecoderSplitsF3() throws {
        let frames: [[UInt8]] = [
            Array("CIPC01".utf8), Array("REQUEST".utf8), Array("r1".utf8), Array("Order@3".utf8),
            Array("resolve".utf8), [], Array(#"{"intent":{"type":"Order"}}"#.utf8),
        ]
        let decoded = try ClientMessageDecoder().decode(frames)
        guard case .request(let request) = decoded else {
            Issue.record("not a request: \(decoded)")
            return
        }
        #expect(request.intentTypeName == "Order" && request.definitionVersion == 3)
    }
}
