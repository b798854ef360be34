import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A blocking HTTP/1.1 GET (`Connection: close`) on 127.0.0.1 (tests of `--http`): the status code and the body.
public func httpGet(port: Int, _ path: String) throws -> (status: Int, body: String) {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw HTTPGetError("socket: errno \(errno)") }
    defer { close(fd) }
    var timeout = timeval(tv_sec: 10, tv_usec: 0)
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
        }
    }
    guard connected == 0 else { throw HTTPGetError("connect to port \(port): errno \(errno)") }
    let request = Array("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".utf8)
    guard send(fd, request, request.count, 0) == request.count else {
        throw HTTPGetError("send: errno \(errno)")
    }
    var response: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65_536)
    while true {
        let count = recv(fd, &buffer, buffer.count, 0)
        if count < 0 && errno == EINTR { continue }
        guard count > 0 else { break }
        response.append(contentsOf: buffer[0..<count])
        if let length = contentLength(response), response.count >= length.headerEnd + length.body { break }
    }
    let text = String(decoding: response, as: UTF8.self)
    guard let headerEnd = text.range(of: "\r\n\r\n"),
        let status = text.split(separator: " ", maxSplits: 2).dropFirst().first.flatMap({ Int($0) })
    else { throw HTTPGetError("not an HTTP response: \(text.prefix(200))") }
    return (status, String(text[headerEnd.upperBound...]))
}

/// One scrape of a Prometheus text exposition: each sample's name, labels and value.
public struct Scrape {
    public struct Sample: Sendable {
        public let name: String
        public let labels: [String: String]
        public let value: Double
    }

    public let samples: [Sample]

    public init(_ text: String) {
        var samples: [Sample] = []
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else {
                continue
            }
            let series = line[..<space]
            var labels: [String: String] = [:]
            var name = String(series)
            if let open = series.firstIndex(of: "{"), series.hasSuffix("}") {
                name = String(series[..<open])
                // Our label values never hold commas or quotes: a simple split is enough here.
                for pair in series[series.index(after: open)..<series.index(before: series.endIndex)]
                    .split(separator: ",")
                {
                    let parts = pair.split(separator: "=", maxSplits: 1)
                    guard parts.count == 2 else { continue }
                    labels[String(parts[0])] = String(parts[1].dropFirst().dropLast())
                }
            }
            samples.append(Sample(name: name, labels: labels, value: value))
        }
        self.samples = samples
    }

    /// The sum of the samples of `name` whose labels include `labels`.
    public func sum(_ name: String, _ labels: [String: String] = [:]) -> Double {
        samples.filter { sample in
            sample.name == name && labels.allSatisfy { sample.labels[$0.key] == $0.value }
        }.reduce(0) { $0 + $1.value }
    }

    /// Whether a series named `name` is exposed at all.
    public func has(_ name: String) -> Bool { samples.contains { $0.name == name } }
}

/// Where the body starts and how long it is, once a response's header is complete and names its length.
private func contentLength(_ response: [UInt8]) -> (headerEnd: Int, body: Int)? {
    let separator: [UInt8] = [13, 10, 13, 10]
    guard response.count >= 4,
        let end = (0...(response.count - 4)).first(where: { Array(response[$0..<$0 + 4]) == separator })
    else { return nil }
    let header = String(decoding: response[0..<end], as: UTF8.self).lowercased()
    guard let line = header.split(separator: "\r\n").first(where: { $0.hasPrefix("content-length:") }),
        let length = Int(line.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces))
    else { return nil }
    return (end + 4, length)
}

/// An HTTP GET that could not be made or answered.
public struct HTTPGetError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
