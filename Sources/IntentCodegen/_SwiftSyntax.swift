/// Spelling Swift source: names, string literals, number literals, doc comments.
enum _SwiftSyntax {
    /// Words that need backticks to be used as names.
    static let keywords: Set<String> = [
        "associatedtype", "class", "deinit", "enum", "extension", "fileprivate", "func", "import", "init", "inout",
        "internal", "let", "open", "operator", "private", "precedencegroup", "protocol", "public", "rethrows",
        "static", "struct", "subscript", "typealias", "var", "break", "case", "catch", "continue", "default", "defer",
        "do", "else", "fallthrough", "for", "guard", "if", "in", "repeat", "return", "throw", "switch", "where",
        "while", "as", "false", "is", "nil", "self", "Self", "super", "throws", "true", "try", "await", "async",
        "any", "some", "consume", "borrowing", "consuming", "package", "Type", "Protocol",
    ]

    /// `name`, in backticks when it is a keyword.
    static func name(_ name: String) -> String { keywords.contains(name) ? "`\(name)`" : name }

    /// The nested enumeration of a parameter's unsupported reasons, e.g. `PayeeUnsupportedReason`.
    static func reasonTypeName(ofParameter name: String) -> String {
        name.prefix(1).uppercased() + name.dropFirst() + "UnsupportedReason"
    }

    /// A string literal for `text`.
    static func literal(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\\": result += "\\\\"
            case "\"": result += "\\\""
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F:
                result += "\\u{\(String(scalar.value, radix: 16))}"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }

    /// A number literal: integral values without a fraction (`600000`), others as Swift prints them.
    static func number(_ value: Double) -> String {
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return "\(value)"
    }

    /// `///` lines for `text` at `indent`, or for `fallback` when `text` is empty.
    static func docComment(_ text: String, fallback: String, indent: String) -> String {
        let body = text.isEmpty ? fallback : text
        return body.split(separator: "\n", omittingEmptySubsequences: false)
            .map { line in line.isEmpty ? "\(indent)///\n" : "\(indent)/// \(line)\n" }
            .joined()
    }
}
