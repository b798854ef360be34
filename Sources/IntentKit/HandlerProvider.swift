/// Maps intent types to handler factories, and runs jobs (SiriKit's `INExtension`'s `handler(for:)`).
///
/// ```swift
/// var provider = HandlerProvider()
/// provider.register { RequestRideHandler() }
/// let output = await provider.run(intentType: "RequestRide", phase: .resolve, body: body, context: context)
/// ```
public struct HandlerProvider: Sendable {
    struct Registration: Sendable {
        let run: @Sendable (IntentPhase, _InteractionBody, HandlerContext) async -> JobOutput
        let definition: @Sendable () -> IntentDefinition
    }

    private(set) var registrations: [String: Registration] = [:]

    /// Creates a provider with no handlers.
    public init() {}

    /// Registers a handler factory for `H.Intent.intentType`, replacing any earlier registration for that type.
    ///
    /// The factory is called for every job: each resolve, confirm and handle gets a fresh handler, never a cached
    /// one, so handlers cannot lean on state from an earlier phase.
    public mutating func register<H: IntentHandler>(_ factory: @escaping @Sendable () -> H) {
        let names = H.Intent.parameters.map(\.name)
        assert(Set(names).count == names.count, "\(H.Intent.self) declares a parameter name twice")
        registrations[H.Intent.intentType] = Registration(
            run: { phase, body, context in
                await _JobRunner<H>.run(
                    factory: factory, parameterNames: names, phase: phase, body: body, context: context)
            },
            definition: { IntentDefinition(describing: H.Intent.self) }
        )
    }

    /// The registered intent types, sorted.
    public var intentTypes: [String] { registrations.keys.sorted() }

    /// The definition of a registered intent type, rendered from its Swift type; nil if it is not registered.
    public func definition(of intentType: String) -> IntentDefinition? {
        registrations[intentType]?.definition()
    }
}
