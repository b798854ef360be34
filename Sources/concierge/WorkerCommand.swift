import ArgumentParser
import ConciergeCommandLine
import ConciergeExamples

struct WorkerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "worker",
        abstract: "Run one worker process with the example handlers."
    )

    @OptionGroup var options: WorkerProcessOptions

    func run() async throws {
        do {
            try await options.run(provider: Examples.provider)
        } catch {
            throw WorkerMain.refusalExit(error)
        }
    }
}
