public import IntentKit

/// The example intents and handlers: the SiriKit guide's examples as Concierge handlers, plus `Echo` for tests and
/// benchmarks. See ``DemoData`` for the data they work with.
public enum Examples {
    /// A provider with all five example handlers registered (a new value on each access; keep one per worker).
    public static var provider: HandlerProvider {
        var provider = HandlerProvider()
        provider.register { RequestRideHandler() }
        provider.register { StartWorkoutHandler() }
        provider.register { SendMessageHandler() }
        provider.register { SendPaymentHandler() }
        provider.register { EchoHandler() }
        return provider
    }

    /// The example intent types, in the order above.
    public static let intentTypes: [any Intent.Type] = [
        RequestRideIntent.self, StartWorkoutIntent.self, SendMessageIntent.self, SendPaymentIntent.self,
        EchoIntent.self,
    ]
}
