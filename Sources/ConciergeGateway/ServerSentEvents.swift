import NIOCore

/// The text of server-sent events (HTML Living Standard, 9.2): `event:`, `id:`, one `data:` line per line of data.
enum ServerSentEvents {
    static func event(_ name: String, id: String, data: [UInt8]) -> ByteBuffer {
        var buffer = ByteBuffer()
        buffer.writeString("event: \(name)\nid: \(id)\n")
        // JSON bodies from the broker are on one line; split anyway, so a newline can never end the event early.
        for line in data.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
            buffer.writeString("data: ")
            buffer.writeBytes(line)
            buffer.writeString("\n")
        }
        buffer.writeString("\n")
        return buffer
    }

    /// A comment line: keeps idle connections alive and finds readers that went away.
    static let keepAlive = ByteBuffer(string: ": keep-alive\n\n")
}
