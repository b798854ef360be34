import Logging

/// The HTTP server's log handler: Hummingbird sets metadata (a request id) on its logger for every request, and a
/// `StreamLogHandler` formats its whole metadata on each set, a cost per request for a line that is almost never
/// written (the server logs at `warning`). This handler keeps the metadata as given and hands it to the process's
/// handler only when a line is written.
struct QuietMetadataLogHandler: LogHandler {
    private var base: any LogHandler
    var metadata: Logger.Metadata = [:]

    init(wrapping base: any LogHandler) {
        self.base = base
    }

    var logLevel: Logger.Level {
        get { base.logLevel }
        set { base.logLevel = newValue }
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var event = event
        if !metadata.isEmpty {
            event.metadata = metadata.merging(event.metadata ?? [:]) { _, explicit in explicit }
        }
        base.log(event: event)
    }
}
