import ArgumentParser

/// `concierge`: the broker, workers, pools, and a one-shot client, as thin subcommands over the libraries.
@main
struct Concierge: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "concierge",
        abstract: "SiriKit's intent lifecycle on your servers: a ZeroMQ broker and a pool of intent workers.",
        subcommands: [
            UpCommand.self, BrokerCommand.self, WorkerCommand.self, PoolCommand.self, ScaleCommand.self,
            SendCommand.self, ReplayCommand.self, GatewayCommand.self,
            LoadCommand.self, KeygenCommand.self, JournalCommand.self, TopCommand.self, IntentsCommand.self,
            PermissionsCommand.self, VersionCommand.self, HTTPFloorCommand.self,
        ]
    )
}
