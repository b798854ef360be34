public import IntentKit

/// Echo text back, optionally after a delay or CPU work, or fail on purpose: for deadline tests and benchmarks.
public struct EchoIntent: Intent, Hashable {
    public static let intentType = "Echo"
    public static let intentDescription =
        "Echo text back; optionally wait or burn CPU in one phase, or fail or crash there, for tests and benchmarks."
    public static let parameters: [IntentParameter<EchoIntent>] = [
        .init("text", \.text, description: "The text to echo."),
        .init(
            "delayMs", \.delayMs, description: "Milliseconds to wait (Task.sleep) in delayPhase.", minimum: 0,
            maximum: 600_000
        ),
        .init(
            "cpuMs", \.cpuMs, description: "Milliseconds to burn CPU (busy loop) in delayPhase.", minimum: 0,
            maximum: 600_000
        ),
        .init("delayPhase", \.delayPhase, description: "The phase that waits, burns CPU or fails; handle when absent."),
        .init("failWith", \.failWith, description: "If set, the handler throws this message in delayPhase."),
        .init(
            "crash", \.crash,
            description:
                "If true, the handler crashes its worker process (a Swift trap) in delayPhase: for tests of crash "
                + "quarantine."),
    ]

    public var identifier: String?
    /// The text to echo.
    public var text: String?
    /// Milliseconds to wait.
    public var delayMs: Int?
    /// Milliseconds of CPU to burn.
    public var cpuMs: Int?
    /// The phase that waits, burns CPU or fails.
    public var delayPhase: EchoPhase?
    /// A message to fail with.
    public var failWith: String?
    /// Whether to crash the worker process.
    public var crash: Bool?

    public init() {}

    /// Creates an intent with the given parameters.
    public init(
        text: String? = nil,
        delayMs: Int? = nil,
        cpuMs: Int? = nil,
        delayPhase: EchoPhase? = nil,
        failWith: String? = nil,
        crash: Bool? = nil
    ) {
        self.text = text
        self.delayMs = delayMs
        self.cpuMs = cpuMs
        self.delayPhase = delayPhase
        self.failWith = failWith
        self.crash = crash
    }
}
