public import ArgumentParser
public import Logging

/// Options every long-running command shares.
public struct LoggingOptions: ParsableArguments, Sendable {
    @Option(help: "Log level: trace, debug, info, notice, warning, error, critical.")
    public var logLevel: String = "info"

    @Option(
        help: "Log format on standard error: `text` (for people) or `json` (one JSON object per line, for shippers).")
    public var logFormat: String = "text"

    public init() {}

    public func validate() throws {
        guard Logger.Level(rawValue: logLevel) != nil else {
            throw ValidationError("--log-level takes trace, debug, info, notice, warning, error or critical")
        }
        guard logFormat == "text" || logFormat == "json" else {
            throw ValidationError("--log-format takes text or json")
        }
    }

    /// Bootstraps swift-log once, first thing in a command's `run()`.
    public func bootstrap() -> Logger.Level {
        let level = Logger.Level(rawValue: logLevel) ?? .info
        let json = logFormat == "json"
        LoggingSystem.bootstrap { label in
            if json {
                var handler = JSONLogHandler(label: label)
                handler.logLevel = level
                return handler
            }
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        return level
    }
}
