import Glibc

/// A small blocking HTTP/1.0 `GET` over a POSIX socket, for `concierge top`'s scrapes of a broker's `/metrics` and
/// `/readyz` (a few kilobytes, once a second): the host is resolved with `getaddrinfo` (names, IPv4, IPv6), each
/// address tried in turn, and one deadline bounds connecting, sending and reading. The answer is read to its
/// `Content-Length` (or to the end of the connection without one); chunked bodies are decoded.
public enum HTTPGet {
    /// An HTTP answer: the status code and the body as text.
    public struct Answer: Sendable, Equatable {
        public var status: Int
        public var body: String

        public init(status: Int, body: String) {
            self.status = status
            self.body = body
        }
    }

    /// The most an answer may hold (headers and body).
    public static let maximumSize = 32 << 20

    /// `GET path` from `host:port` within `timeout`.
    public static func get(host: String, port: Int, path: String, timeout: Duration) throws(HTTPGetError) -> Answer {
        let deadline = ContinuousClock.now + timeout
        let socket = try connect(host: host, port: port, deadline: deadline, timeout: timeout)
        defer { close(socket) }
        let hostHeader = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        let request = "GET \(path) HTTP/1.0\r\nHost: \(hostHeader)\r\nAccept: text/plain\r\nConnection: close\r\n\r\n"
        try send(Array(request.utf8), on: socket, deadline: deadline, timeout: timeout)
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            if let answer = try parse(received, complete: false) { return answer }
            try wait(socket, for: Int16(POLLIN), deadline: deadline, timeout: timeout, doing: "reading")
            let count = buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
            if count < 0 {
                if errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR { continue }
                throw HTTPGetError(code: .connection, message: "reading: \(errorText(errno))")
            }
            if count == 0 {
                guard let answer = try parse(received, complete: true) else {
                    throw HTTPGetError(code: .malformed, message: "the connection closed before a whole answer")
                }
                return answer
            }
            received += buffer[0..<count]
            guard received.count <= maximumSize else {
                throw HTTPGetError(code: .malformed, message: "an answer over \(maximumSize) bytes")
            }
        }
    }

    /// Parses what was received so far: nil when more is needed (`complete`: the peer closed the connection).
    static func parse(_ bytes: [UInt8], complete: Bool) throws(HTTPGetError) -> Answer? {
        let separator: [UInt8] = [13, 10, 13, 10]
        guard bytes.count >= 4,
            let end = (0...(bytes.count - 4)).first(where: { bytes[$0..<($0 + 4)].elementsEqual(separator) })
        else {
            if complete { throw HTTPGetError(code: .malformed, message: "no HTTP header in the answer") }
            return nil
        }
        let head = String(decoding: bytes[..<end], as: UTF8.self)
        let lines = head.split(separator: "\r\n", omittingEmptySubsequences: false)
        let statusParts = lines[0].split(separator: " ", maxSplits: 2)
        guard statusParts.count >= 2, statusParts[0].hasPrefix("HTTP/"), let status = Int(statusParts[1]) else {
            throw HTTPGetError(code: .malformed, message: "not an HTTP status line: \"\(lines[0].prefix(80))\"")
        }
        var contentLength: Int?
        var chunked = false
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = line[..<colon].lowercased()
            let value = line[line.index(after: colon)...].trimmingSpaces
            if name == "content-length" {
                guard let length = Int(value), length >= 0 else {
                    throw HTTPGetError(code: .malformed, message: "a bad Content-Length: \(value)")
                }
                contentLength = length
            } else if name == "transfer-encoding" && value.lowercased().contains("chunked") {
                chunked = true
            }
        }
        let body = Array(bytes[(end + 4)...])
        if chunked {
            guard let decoded = try dechunk(body) else {
                if complete { throw HTTPGetError(code: .malformed, message: "a chunked body cut short") }
                return nil
            }
            return Answer(status: status, body: String(decoding: decoded, as: UTF8.self))
        }
        if let contentLength {
            if body.count >= contentLength {
                return Answer(status: status, body: String(decoding: body.prefix(contentLength), as: UTF8.self))
            }
            if complete {
                throw HTTPGetError(
                    code: .malformed, message: "the body ended after \(body.count) of \(contentLength) bytes")
            }
            return nil
        }
        return complete ? Answer(status: status, body: String(decoding: body, as: UTF8.self)) : nil
    }

    /// A chunked body's bytes, nil when its last chunk has not arrived yet.
    static func dechunk(_ bytes: [UInt8]) throws(HTTPGetError) -> [UInt8]? {
        var output: [UInt8] = []
        var index = 0
        while true {
            guard
                let lineEnd = (index..<max(index, bytes.count - 1)).first(where: {
                    bytes[$0] == 13 && bytes[$0 + 1] == 10
                })
            else { return nil }
            let sizeText = String(decoding: bytes[index..<lineEnd], as: UTF8.self).split(separator: ";").first ?? ""
            guard let size = Int(sizeText.trimmingSpaces, radix: 16), size >= 0 else {
                throw HTTPGetError(code: .malformed, message: "a bad chunk size: \(sizeText)")
            }
            let start = lineEnd + 2
            if size == 0 { return output }
            guard bytes.count >= start + size + 2 else { return nil }
            output += bytes[start..<(start + size)]
            index = start + size + 2
        }
    }

    // MARK: Sockets

    private static func connect(
        host: String, port: Int, deadline: ContinuousClock.Instant, timeout: Duration
    ) throws(HTTPGetError) -> Int32 {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let list else {
            throw HTTPGetError(
                code: .resolution, message: "cannot resolve \(host): \(String(cString: gai_strerror(status)))")
        }
        defer { freeaddrinfo(list) }
        var failure = HTTPGetError(code: .connection, message: "no address for \(host)")
        var next: UnsafeMutablePointer<addrinfo>? = list
        while let address = next {
            next = address.pointee.ai_next
            let socket = Glibc.socket(
                address.pointee.ai_family,
                Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue),
                address.pointee.ai_protocol)
            guard socket >= 0 else {
                failure = HTTPGetError(code: .connection, message: "socket: \(errorText(errno))")
                continue
            }
            do throws(HTTPGetError) {
                if Glibc.connect(socket, address.pointee.ai_addr, address.pointee.ai_addrlen) != 0 {
                    guard errno == EINPROGRESS || errno == EINTR else {
                        throw HTTPGetError(code: .connection, message: errorText(errno))
                    }
                    try wait(socket, for: Int16(POLLOUT), deadline: deadline, timeout: timeout, doing: "connecting")
                    var error: Int32 = 0
                    var length = socklen_t(MemoryLayout<Int32>.size)
                    getsockopt(socket, SOL_SOCKET, SO_ERROR, &error, &length)
                    guard error == 0 else { throw HTTPGetError(code: .connection, message: errorText(error)) }
                }
                return socket
            } catch {
                close(socket)
                failure = error
                if error.code == .timeout { throw error }
            }
        }
        throw failure
    }

    private static func send(
        _ bytes: [UInt8], on socket: Int32, deadline: ContinuousClock.Instant, timeout: Duration
    ) throws(HTTPGetError) {
        var sent = 0
        while sent < bytes.count {
            let count = bytes.withUnsafeBytes {
                Glibc.send(socket, $0.baseAddress! + sent, $0.count - sent, Int32(MSG_NOSIGNAL))
            }
            if count < 0 {
                guard errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR else {
                    throw HTTPGetError(code: .connection, message: "sending: \(errorText(errno))")
                }
                try wait(socket, for: Int16(POLLOUT), deadline: deadline, timeout: timeout, doing: "sending")
            } else {
                sent += count
            }
        }
    }

    /// Waits until `socket` is ready for `events`, or throws when the deadline passes.
    private static func wait(
        _ socket: Int32, for events: Int16, deadline: ContinuousClock.Instant, timeout: Duration, doing: String
    ) throws(HTTPGetError) {
        while true {
            let left = ContinuousClock.now.duration(to: deadline)
            let milliseconds = left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000
            guard milliseconds > 0 else {
                throw HTTPGetError(code: .timeout, message: "no answer within \(timeout) (\(doing))")
            }
            var descriptor = pollfd(fd: socket, events: events, revents: 0)
            let ready = poll(&descriptor, 1, Int32(clamping: milliseconds))
            if ready > 0 { return }
            if ready < 0 && errno != EINTR {
                throw HTTPGetError(code: .connection, message: "poll: \(errorText(errno))")
            }
        }
    }

    private static func errorText(_ code: Int32) -> String {
        String(cString: strerror(code)).lowercased()
    }
}

/// Why a `GET` got no HTTP answer.
public struct HTTPGetError: Error, Sendable, Equatable, CustomStringConvertible {
    public struct Code: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        /// The host name did not resolve.
        public static let resolution = Code(rawValue: "resolution")
        /// Connecting, sending or reading failed (e.g. connection refused).
        public static let connection = Code(rawValue: "connection")
        /// Nothing within the time limit.
        public static let timeout = Code(rawValue: "timeout")
        /// The answer was not HTTP, or was cut short.
        public static let malformed = Code(rawValue: "malformed")
        public var description: String { rawValue }
    }

    public let code: Code
    public let message: String

    public init(code: Code, message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }
}

extension StringProtocol {
    var trimmingSpaces: String {
        String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}
