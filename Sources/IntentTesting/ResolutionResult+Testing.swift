public import IntentKit

extension ResolutionResult {
    /// The options of a `disambiguation`, or nil for any other kind.
    public var options: [Value]? {
        guard case .disambiguation(let options) = self else { return nil }
        return options
    }

    /// The reason of an `unsupported` resolution, or nil (for any other kind, or an unsupported one without a
    /// reason).
    public var reason: String? {
        guard case .unsupported(let reason) = self else { return nil }
        return reason
    }
}
