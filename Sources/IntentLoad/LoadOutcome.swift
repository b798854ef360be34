import ConciergeJSON

/// Names what a reply says, for the outcome counts of a load run.
///
/// Keys: `final.<phase>.<code>` for final replies (confirm and handle: the response code; resolve: `success`
/// when every parameter resolved to success or notRequired, else the kind that needs the user, e.g.
/// `final.resolve.disambiguation`), `error.<code>` for error replies (`error.busy` is a shed request),
/// `progress` for in-progress replies, and `unanswered` for requests without a final reply when the run ended.
public enum LoadOutcome {
    public static let progress = "progress"
    public static let unanswered = "unanswered"

    /// The outcome key of a final reply's body for `phase`.
    public static func final(phase: String, body: UnsafeRawBufferPointer) -> String {
        guard let value = try? JSONValue.parse(body) else { return "final.\(phase).unparsable" }
        return "final.\(phase).\(code(of: value, phase: phase))"
    }

    /// The outcome key of an error reply's body (`{"code": ..., "message": ...}`).
    public static func error(body: UnsafeRawBufferPointer) -> String {
        guard let value = try? JSONValue.parse(body), let code = value["code"]?.stringValue else {
            return "error.unparsable"
        }
        return "error.\(code)"
    }

    /// The response code of `phase` in an Interaction, or the summary kind of its resolutions.
    static func code(of interaction: JSONValue, phase: String) -> String {
        guard let output = interaction[phase] else { return "missing" }
        if phase != "resolve" { return output["code"]?.stringValue ?? "missing" }
        // The kind that most needs the user wins; all success/notRequired is success.
        let order = ["unsupported", "disambiguation", "confirmationRequired", "needsValue"]
        var worst: Int?
        for resolution in output.objectValue?.values ?? [:].values {
            if let kind = resolution["kind"]?.stringValue, let rank = order.firstIndex(of: kind) {
                worst = min(worst ?? rank, rank)
            }
        }
        return worst.map { order[$0] } ?? "success"
    }
}
