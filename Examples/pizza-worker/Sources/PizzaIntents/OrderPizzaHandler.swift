public import IntentKit

/// Handles ``OrderPizzaIntent`` (generated from `Intents/OrderPizza.intent.json`).
///
/// A fresh handler is made for every job, so it keeps no state: what it knows (the menu, the streets it delivers
/// to) is constant, and what it decides travels in the Interaction.
public struct OrderPizzaHandler: IntentHandler {
    public typealias Intent = OrderPizzaIntent

    /// The toppings on the menu.
    public static let menu: Set<String> = ["cheese", "ham", "mushrooms", "olives", "peppers"]
    /// Streets that exist in two towns: an address on one of them needs the user to say which.
    public static let ambiguousStreets = [
        "1 Main Street": ["1 Main Street, Springfield", "1 Main Street, Shelbyville"]
    ]

    public init() {}

    public func resolve(intent: OrderPizzaIntent, context: HandlerContext) async throws -> Resolutions<OrderPizzaIntent>
    {
        var resolutions = Resolutions<OrderPizzaIntent>()
        // A missing `size` or `address` needs a value without a line here: they are required in the definition.
        if let toppings = intent.toppings, toppings.contains(where: { !Self.menu.contains($0) }) {
            resolutions.unsupported(toppings: .toppingNotOnTheMenu)
        }
        if let address = intent.address, let towns = Self.ambiguousStreets[address] {
            resolutions.address = .disambiguation(towns)
        }
        return resolutions
    }

    public func confirm(intent: OrderPizzaIntent, context: HandlerContext) async throws -> ConfirmResponse<
        OrderPizzaIntent
    > {
        // `address` is required, so confirm never runs without it (missing-parameter before any handler code).
        intent.address!.hasSuffix(", Shelbyville")
            ? ConfirmResponse(code: .failureOutsideDeliveryArea) : ConfirmResponse(code: .ready)
    }

    public func handle(intent: OrderPizzaIntent, context: HandlerContext) async throws -> HandleResponse<
        OrderPizzaIntent
    > {
        // Force-unwrapping a required parameter is safe: a handle without it ends `missing-parameter` first.
        let size = intent.size!
        let minutes = size == .large ? 40 : 25
        return HandleResponse(
            code: .success,
            data: [
                "size": .string(size.rawValue), "etaMinutes": .int(Int64(minutes)),
                "toppings": .int(Int64(intent.toppings?.count ?? 0)), "attempt": .int(Int64(context.attempt)),
            ])
    }
}
