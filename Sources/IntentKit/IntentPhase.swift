/// A phase of the intent lifecycle (resolve each parameter, then confirm, then handle).
public enum IntentPhase: String, Sendable, CaseIterable {
    /// Validate each parameter (``IntentHandler/resolve(intent:context:)``).
    case resolve
    /// Final validation and readiness check (``IntentHandler/confirm(intent:context:)``).
    case confirm
    /// Perform the task (``IntentHandler/handle(intent:context:)``).
    case handle
}
