import IntentBroker
import IntentClient
import IntentLoad
import IntentPool
import IntentWire
import IntentWorker

/// The defaults the CLI shows, read from the configuration types' initializers, where they are defined once.
enum Defaults {
    static let broker = BrokerConfiguration()
    static let worker = WorkerConfiguration(name: "")
    static let client = ClientConfiguration(routingID: "")
    static let load = LoadConfiguration()
    static let pool = PoolConfiguration(executable: "")
}

extension Duration {
    /// The duration in whole milliseconds (for options given in milliseconds).
    var wholeMilliseconds: Int { Int(nanoseconds / 1_000_000) }

    /// The duration in whole seconds (for options given in seconds).
    var wholeSeconds: Int { Int(components.seconds) }
}
