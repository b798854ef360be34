import IntentBroker
import IntentPermissions
import Logging
import ServiceLifecycle
import UnixSignals

/// Rereads the broker's permissions file on SIGHUP (`concierge permissions reload` sends it) and puts it in force.
/// A file that cannot be read or does not parse keeps the permissions in force, and the log says why.
struct PermissionsReloader: Service {
    let path: String
    let broker: Broker
    let logger: Logger

    func run() async throws {
        let hangups = await UnixSignalsSequence(trapping: .sighup)
        for await _ in hangups.cancelOnGracefulShutdown() {
            reload()
        }
    }

    private func reload() {
        do {
            let permissions = try Permissions.load(path: path)
            try broker.replacePermissions(permissions)
            logger.info(
                "permissions file reloaded",
                metadata: ["file": "\(path)", "identities": "\(permissions.identities.count)"])
        } catch {
            logger.error(
                "permissions file refused; the permissions in force stay",
                metadata: ["file": "\(path)", "error": "\(error)"])
        }
    }
}
