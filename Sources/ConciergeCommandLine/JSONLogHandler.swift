import ConciergeJSON
public import Logging

#if canImport(Glibc)
    import Glibc
#endif

/// A swift-log handler that writes one JSON object per line (for log shippers: Vector, Fluent Bit, Loki's
/// promtail), selected with `--log-format json`:
///
///     {"time":"2026-11-23T21:43:57.123Z","level":"info","label":"concierge.broker","message":"broker ready",
///      "source":"IntentBroker","metadata":{"frontend":"tcp://127.0.0.1:5555"}}
///
/// Metadata values keep their shape (strings, arrays, objects). Each line is written with one `write(2)`, so lines
/// from several threads never interleave. No Foundation: the worker executable stays small.
public struct JSONLogHandler: LogHandler {
    public var logLevel: Logger.Level = .info
    public var metadata: Logger.Metadata = [:]
    public var metadataProvider: Logger.MetadataProvider?
    private let label: String
    private let sink: @Sendable ([UInt8]) -> Void

    /// A handler for `label` writing to standard error, or to `sink` (tests).
    public init(label: String, sink: (@Sendable ([UInt8]) -> Void)? = nil) {
        self.label = label
        self.sink = sink ?? { line in line.withUnsafeBytes { _ = write(2, $0.baseAddress, $0.count) } }
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var merged = metadata
        if let provided = metadataProvider?.get() { merged.merge(provided) { _, new in new } }
        if let extra = event.metadata { merged.merge(extra) { _, new in new } }
        var line: [UInt8] = []
        line.reserveCapacity(160)
        line.append(contentsOf: #"{"time":"#.utf8)
        JSONText.appendString(Self.timestamp(), to: &line)
        line.append(contentsOf: #","level":"#.utf8)
        JSONText.appendString(event.level.rawValue, to: &line)
        line.append(contentsOf: #","label":"#.utf8)
        JSONText.appendString(label, to: &line)
        line.append(contentsOf: #","message":"#.utf8)
        JSONText.appendString(event.message.description, to: &line)
        line.append(contentsOf: #","source":"#.utf8)
        JSONText.appendString(event.source, to: &line)
        if !merged.isEmpty {
            line.append(contentsOf: #","metadata":"#.utf8)
            Self.append(.dictionary(merged), to: &line)
        }
        line.append(contentsOf: "}\n".utf8)
        sink(line)
    }

    private static func append(_ value: Logger.Metadata.Value, to out: inout [UInt8]) {
        switch value {
        case .string(let text): JSONText.appendString(text, to: &out)
        case .stringConvertible(let convertible): JSONText.appendString(convertible.description, to: &out)
        case .array(let values):
            out.append(UInt8(ascii: "["))
            for (index, element) in values.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                append(element, to: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .dictionary(let entries):
            out.append(UInt8(ascii: "{"))
            for (index, key) in entries.keys.sorted().enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                JSONText.appendString(key, to: &out)
                out.append(UInt8(ascii: ":"))
                append(entries[key]!, to: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    /// Now, in UTC, ISO 8601 with milliseconds.
    static func timestamp() -> String {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        var seconds = now.tv_sec
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func pad(_ value: Int, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        return "\(pad(Int(parts.tm_year) + 1900, 4))-\(pad(Int(parts.tm_mon) + 1, 2))-\(pad(Int(parts.tm_mday), 2))T"
            + "\(pad(Int(parts.tm_hour), 2)):\(pad(Int(parts.tm_min), 2)):\(pad(Int(parts.tm_sec), 2))."
            + "\(pad(Int(now.tv_nsec / 1_000_000), 3))Z"
    }
}
