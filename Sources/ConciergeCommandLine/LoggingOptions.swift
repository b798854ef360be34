public import ArgumentParser
public import Logging

/// Options every long-running command shares.
public struct LoggingOptions: ParsableArguments, Sendable {
    @Option(help: "Log level: trace, debug, info, notice, warning, error, critical.")
    public var logLevel: String = "info"

    public init() {}

    public func validate() throws {
        guard Logger.Level(rawValue: logLevel) != nil else {
            throw ValidationError("--log-level takes trace, debug, info, notice, warning, error or critical")
        }
    }

    /// Bootstraps swift-log once, first thing in a command's `run()`.
    public func bootstrap() -> Logger.Level {
        let level = Logger.Level(rawValue: logLevel) ?? .info
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        return level
    }
}
