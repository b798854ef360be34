import ArgumentParser
import ConciergeJSON
import IntentClient

/// One `--answer` of `concierge send --converse`: an answer given in advance, used (once) the first time the
/// conversation asks about its parameter (or, for `confirm:yes|no`, asks to confirm the whole intent).
///
/// Forms: `P=option:N` (option N of P's disambiguation), `P=confirm:yes|no` (P's confirmation request),
/// `P=value:TEXT` (TEXT as P's value, read as JSON, else as a string), `P=TEXT` (the same, when TEXT starts with none
/// of `option:`, `confirm:`, `value:`), and `confirm:yes|no` (the whole intent).
enum ScriptedAnswer {
    /// Parses one `--answer`; throws a `ValidationError` saying what is wrong.
    static func parse(_ text: String) throws -> ConversationAnswer {
        if let yes = yesNo(afterPrefix: "confirm:", in: text) { return .confirmIntent(yes: yes) }
        guard let equals = text.firstIndex(of: "="), equals != text.startIndex else {
            throw ValidationError(
                "--answer \"\(text)\": give PARAMETER=VALUE, PARAMETER=option:N, PARAMETER=confirm:yes|no or "
                    + "confirm:yes|no")
        }
        let parameter = String(text[..<equals])
        let answer = String(text[text.index(after: equals)...])
        if answer.hasPrefix("option:") {
            guard let index = Int(answer.dropFirst("option:".count)), index >= 0 else {
                throw ValidationError("--answer \"\(text)\": option: takes an index from 0")
            }
            return .option(parameter: parameter, index: index)
        }
        if answer.hasPrefix("confirm:") {
            guard let yes = yesNo(afterPrefix: "confirm:", in: answer) else {
                throw ValidationError("--answer \"\(text)\": confirm: takes yes or no")
            }
            return .confirmParameter(parameter: parameter, yes: yes)
        }
        if answer.hasPrefix("value:") { return .value(parameter: parameter, value(String(answer.dropFirst(6)))) }
        return .value(parameter: parameter, value(answer))
    }

    /// Text a person typed (or gave) as a value: JSON if it parses, else the text as a string.
    static func value(_ text: String) -> JSONValue {
        (try? JSONValue.parse(text)) ?? .string(text)
    }

    /// `yes`/`y` or `no`/`n` (any case) after `prefix`, nil for anything else.
    static func yesNo(afterPrefix prefix: String, in text: String) -> Bool? {
        guard text.hasPrefix(prefix) else { return nil }
        return yesNo(String(text.dropFirst(prefix.count)))
    }

    /// `yes`/`y` or `no`/`n` (any case, surrounding blanks ignored), nil for anything else.
    static func yesNo(_ text: String) -> Bool? {
        switch text.trimmingBlanks().lowercased() {
        case "y", "yes": true
        case "n", "no": false
        default: nil
        }
    }
}

extension String {
    /// The string without leading and trailing spaces, tabs and line ends.
    func trimmingBlanks() -> String {
        let blank: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" }
        guard let first = firstIndex(where: { !blank($0) }), let last = lastIndex(where: { !blank($0) }) else {
            return ""
        }
        return String(self[first...last])
    }
}
