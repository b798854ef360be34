/// A phase of the intent lifecycle: what a REQUEST asks the broker to run (F4), and the phase of a JOB (F4), which
/// is never `lifecycle`.
///
/// The one definition of the phase words; IntentKit calls it `IntentPhase`, the phase a handler runs.
public enum RequestPhase: String, Sendable, CaseIterable, CustomStringConvertible {
    /// Validate each parameter.
    case resolve
    /// Final validation and readiness check.
    case confirm
    /// Perform the task.
    case handle
    /// resolve -> confirm -> handle, each as its own job, stopping at the first phase that needs the user.
    case lifecycle

    /// The phase's wire name.
    @inlinable
    public var name: StaticString {
        switch self {
        case .resolve: "resolve"
        case .confirm: "confirm"
        case .handle: "handle"
        case .lifecycle: "lifecycle"
        }
    }

    public var description: String { name.description }

    /// Parses a phase frame.
    public init?(frame: UnsafeRawBufferPointer) {
        guard let phase = Self.allCases.first(where: { $0.name.matches(frame) }) else { return nil }
        self = phase
    }

    /// Parses a phase's wire name.
    public init?(_ string: String) { self.init(rawValue: string) }

    /// The first job phase of a request for this phase.
    public var firstJob: RequestPhase { self == .lifecycle ? .resolve : self }

    /// The job phase after this one in a lifecycle, if any.
    public var next: RequestPhase? {
        switch self {
        case .resolve: .confirm
        case .confirm: .handle
        case .handle, .lifecycle: nil
        }
    }

    /// The position of a job phase in a lifecycle (resolve 0, confirm 1, handle 2; `lifecycle` 3).
    public var order: Int {
        switch self {
        case .resolve: 0
        case .confirm: 1
        case .handle: 2
        case .lifecycle: 3
        }
    }

    /// Resolve and confirm jobs are side-effect free by contract, so a lost one may run again elsewhere.
    public var isRetriable: Bool { self == .resolve || self == .confirm }
}
