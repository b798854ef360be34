/// The six kinds of parameter resolution, as written in the `"kind"` field of a resolution.
public enum ResolutionKind: String, Sendable, Hashable, CaseIterable {
    /// The value can be used as is (the resolved value is written back into the intent).
    case success
    /// The handler does not need this parameter.
    case notRequired
    /// The handler needs a value and there is none: ask the user.
    case needsValue
    /// Several values match: let the user choose one of the options.
    case disambiguation
    /// The handler chose a value but wants the user to confirm it (it is written back into the intent).
    case confirmationRequired
    /// The value cannot be used, optionally with a reason.
    case unsupported

    /// Whether the lifecycle may go on without the user: ``success`` and ``notRequired``.
    public var isResolved: Bool { self == .success || self == .notRequired }
}
