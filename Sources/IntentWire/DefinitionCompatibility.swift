public import ConciergeJSON

/// Whether a later definition of an intent type can serve every request admitted under an earlier one
/// (`Schemas/PROTOCOL.md` section 5.18): the rules of a compatible change, checked on the definitions' JSON.
///
/// A change is compatible when a caller that followed the earlier definition gets what it asked for from a worker of
/// the later one:
/// - every parameter of the earlier definition is still there, with the same `type`, `list` and `enum`; it may stop
///   being required, never start; its `minimum` and `maximum` may widen, never narrow;
/// - a new parameter is optional (`"required": false`);
/// - an enumeration keeps every case (new cases may be added: a caller of the earlier definition never sends them);
/// - the confirm and handle codes keep every code (new codes may be added);
/// - descriptions, `maxAsks` and `unsupportedReasons` may change.
///
/// Anything else (a parameter removed, renamed or retyped, a case or code removed, a new required parameter) is a
/// breaking change: both versions are served side by side, and requests run only on workers of the version they were
/// admitted under.
public enum DefinitionCompatibility {
    /// Nil when `later` can serve every request admitted under `earlier`; otherwise the first reason it cannot
    /// ("parameter recipient: its type changed from person to string").
    public static func incompatibility(of later: JSONValue, with earlier: JSONValue) -> String? {
        guard later["intent"] == earlier["intent"] else { return "the intent type differs" }
        let laterParameters = parameters(later)
        let earlierParameters = parameters(earlier)
        for (name, old) in earlierParameters {
            guard let new = laterParameters[name] else { return "parameter \(name) was removed" }
            for key in ["type", "list", "enum"] where new[key] != old[key] {
                return "parameter \(name): its \(key) changed from \(text(old[key])) to \(text(new[key]))"
            }
            if new["required"]?.boolValue == true, old["required"]?.boolValue != true {
                return "parameter \(name) became required"
            }
            if let oldMinimum = old["minimum"]?.doubleValue {
                if let newMinimum = new["minimum"]?.doubleValue, newMinimum > oldMinimum {
                    return "parameter \(name): its minimum rose"
                }
            } else if new["minimum"] != nil {
                return "parameter \(name) got a minimum"
            }
            if let oldMaximum = old["maximum"]?.doubleValue {
                if let newMaximum = new["maximum"]?.doubleValue, newMaximum < oldMaximum {
                    return "parameter \(name): its maximum fell"
                }
            } else if new["maximum"] != nil {
                return "parameter \(name) got a maximum"
            }
        }
        for (name, new) in laterParameters where earlierParameters[name] == nil {
            if new["required"]?.boolValue == true { return "new parameter \(name) is required" }
        }
        let earlierEnums = earlier["enums"]?.objectValue ?? [:]
        let laterEnums = later["enums"]?.objectValue ?? [:]
        for (name, cases) in earlierEnums {
            let kept = Set((laterEnums[name]?.arrayValue ?? []).compactMap(\.stringValue))
            if let lost = (cases.arrayValue ?? []).compactMap(\.stringValue).first(where: { !kept.contains($0) }) {
                return "enumeration \(name) lost its case \(lost)"
            }
        }
        for key in ["confirmCodes", "handleCodes"] {
            guard let old = earlier[key]?.arrayValue else { continue }
            let kept = Set((later[key]?.arrayValue ?? []).compactMap(\.stringValue))
            if let lost = old.compactMap(\.stringValue).first(where: { !kept.contains($0) }) {
                return "\(key) lost the code \(lost)"
            }
        }
        return nil
    }

    /// Whether `later` can serve every request admitted under `earlier` (``incompatibility(of:with:)`` is nil).
    public static func isCompatible(_ later: JSONValue, with earlier: JSONValue) -> Bool {
        incompatibility(of: later, with: earlier) == nil
    }

    private static func parameters(_ definition: JSONValue) -> [String: JSONValue] {
        var byName: [String: JSONValue] = [:]
        for parameter in definition["parameters"]?.arrayValue ?? [] {
            if let name = parameter["name"]?.stringValue { byName[name] = parameter }
        }
        return byName
    }

    private static func text(_ value: JSONValue?) -> String {
        guard let value else { return "none" }
        return value.stringValue ?? value.serializedString()
    }
}
