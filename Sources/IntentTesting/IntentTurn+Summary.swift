import ConciergeJSON
import IntentKit

extension IntentTurn: CustomStringConvertible {
    /// One line per phase result: the resolution of every parameter, the confirm and handle codes with their data
    /// and message, or the error (as the transcript shows them).
    public var description: String { summary }

    /// The turn in a few lines: `resolve: recipient disambiguation [...]; content success "Hi"`, `confirm: ready`,
    /// `handle: success {"messageId":"msg-1"}`, or `resolve error handler-failed: ...`.
    var summary: String {
        if let error {
            return "\(phase) \(outcome) \(error.code): \(error.message)"
        }
        var lines: [String] = []
        if !resolutions.isEmpty {
            let parts = I.parameters.compactMap { parameter -> String? in
                guard let resolution = resolutions[parameter.name] else { return nil }
                return "\(parameter.name) \(Self.describe(resolution: resolution))"
            }
            lines.append("resolve: " + parts.joined(separator: "; "))
        }
        if let confirm {
            lines.append(
                "confirm: " + Self.describe(code: confirm.code.rawValue, data: confirm.data, message: confirm.message))
        }
        if let handle {
            lines.append(
                "handle: " + Self.describe(code: handle.code.rawValue, data: handle.data, message: handle.message))
        }
        return lines.isEmpty ? "\(phase) \(outcome)" : lines.joined(separator: "\n")
    }

    /// What a stopping resolution offers, for saying what was asked: ` (2 options)`, ` (reason)` or nothing.
    func detail(ofResolutionNamed name: String) -> String {
        if let options = resolutions[name]?["options"]?.arrayValue { return " (\(options.count) options)" }
        if let reason = resolutions[name]?["reason"]?.stringValue { return " (\(reason))" }
        return ""
    }

    private static func describe(resolution: JSONValue) -> String {
        let kind = resolution["kind"]?.stringValue ?? "?"
        if let value = resolution["value"] { return "\(kind) \(short(value))" }
        if case .array(let options)? = resolution["options"] {
            let listed = options.enumerated().map { "\($0.offset): \(short($0.element))" }
            return "\(kind) [\(listed.joined(separator: ", "))]"
        }
        if let reason = resolution["reason"]?.stringValue { return "\(kind) (\(reason))" }
        return kind
    }

    private static func describe(code: String, data: JSONObject?, message: String?) -> String {
        var text = code
        if let data { text += " " + short(.object(data), limit: 160) }
        if let message { text += " \"\(message)\"" }
        return text
    }

    /// A value's JSON text, cut at `limit` characters.
    static func short(_ value: JSONValue, limit: Int = 80) -> String {
        let text = value.serializedString()
        return text.count <= limit ? text : String(text.prefix(limit - 1)) + "…"
    }
}
