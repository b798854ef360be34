// The worker executable: the handlers in a provider, and WorkerMain gives it the command line and environment of
// `concierge worker` (--broker, --name, --capacity, --jobs-on, CURVE keys, heartbeat, log level and format). Under
// `concierge pool --executable .build/release/pizza-worker` it gets the pool's broker endpoints, worker names and
// CURVE keys.
import ConciergeCommandLine
import IntentKit
import PizzaIntents

@main
enum PizzaWorker {
    static func main() {
        var provider = HandlerProvider()
        provider.register { OrderPizzaHandler() }
        WorkerMain.run(provider)
    }
}
