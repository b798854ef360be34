import IntentWire

/// Names what a reply says, for the outcome counts of a load run.
///
/// Keys: `final.<phase>.<code>` for final replies (confirm and handle: the response code; resolve: `success`
/// when every parameter resolved to success or notRequired, else the kind that needs the user, e.g.
/// `final.resolve.disambiguation`), `error.<code>` for error replies (`error.busy` is a shed request),
/// `progress` for in-progress replies, `unanswered` for requests without a final reply when the run ended, and
/// `error.broker-restarted` for requests the broker no longer knew after their connection came back (a client-side
/// ending, not a reply: the broker restarted and lost them; PROTOCOL.md 7.2), and `throttled` for requests the
/// client's adaptive throttle refused without sending them.
public enum LoadOutcome {
    public static let progress = "progress"
    public static let unanswered = "unanswered"
    public static let brokerRestarted = "error.broker-restarted"
    /// A request the client's own throttle refused (``LoadConfiguration/throttle``): it was never sent.
    public static let throttled = "throttled"
    /// The outcome of a request the broker shed.
    public static let busy = "error.busy"
    /// The outcome of a request whose intent type no worker serves.
    public static let unknownIntent = "error.unknown-intent"

    /// Whether a final reply's outcome key is a handler's failure (`final.<phase>.failure…`: `failure`,
    /// `failureRequiringAppLaunch`, an intent's own `failureInsufficientFunds`, ...). Such a reply ends the request
    /// but did not do what was asked: a run counts it as a failure, not as throughput.
    public static func isFailure(_ outcome: String) -> Bool {
        guard outcome.hasPrefix("final.") else { return false }
        let code = outcome.split(separator: ".", maxSplits: 2).dropFirst(2).first ?? ""
        return code.hasPrefix("failure")
    }

    /// The outcome key of a final reply's body for `phase`.
    public static func final(phase: String, body: UnsafeRawBufferPointer) -> String {
        guard let code = code(phase: phase, body: body) else { return "final.\(phase).unparsable" }
        return "final.\(phase).\(code)"
    }

    /// The outcome key of an error reply's body (`{"code": ..., "message": ...}`).
    public static func error(body: UnsafeRawBufferPointer) -> String {
        var scanner = JSONScanner(body)
        guard let code = scanner.stringMember("code"), !code.isEmpty else { return "error.unparsable" }
        return "error.\(String(decoding: code, as: UTF8.self))"
    }

    /// The response code of `phase` in an Interaction body, or the summary kind of its resolutions (the kind
    /// that most needs the user wins; all success or notRequired is `success`). Reads the body without parsing
    /// all of it.
    static func code(phase: String, body: UnsafeRawBufferPointer) -> String? {
        var scanner = JSONScanner(body)
        var phaseBytes = phase
        var found = false
        var code: String?
        // One pass: the phase's member is read where it is found (its object checked on the way), the rest skipped.
        let wellFormed = phaseBytes.withUTF8 { phaseUTF8 in
            scanner.forEachMemberReading { name, value in
                guard name.elementsEqual(UnsafeRawBufferPointer(phaseUTF8)) else { return (more: true, read: false) }
                found = true
                if phase != "resolve" {
                    // stringMember checks the whole object and leaves the scanner after it; when it finds no code the
                    // value is skipped (and checked) as any other.
                    guard let text = value.stringMember("code") else { return (more: false, read: false) }
                    code = String(decoding: text, as: UTF8.self)
                    return (more: false, read: true)
                }
                var worst = resolutionOrder.count
                let resolutions = value.forEachMember { _, resolution in
                    if let kind = resolution.stringMember("kind"),
                        let rank = resolutionOrder.firstIndex(where: { $0.matches(kind) })
                    {
                        worst = min(worst, rank)
                    }
                    return true
                }
                guard resolutions else { return (more: false, read: false) }
                code = worst < resolutionOrder.count ? resolutionOrder[worst].description : "success"
                return (more: false, read: true)
            }
        }
        guard wellFormed, found else { return nil }
        return code
    }

    private static let resolutionOrder: [StaticString] = [
        "unsupported", "disambiguation", "confirmationRequired", "needsValue",
    ]
}
