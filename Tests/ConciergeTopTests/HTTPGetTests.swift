import ConciergeTop
import Foundation
import Glibc
import Testing

@Suite struct HTTPGetTests {
    /// Serves one connection on 127.0.0.1 with `answer`, written in pieces of `piece` bytes; returns the port.
    static func serveOnce(_ answer: String, piece: Int) throws -> Int32 {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        try withUnsafeMutablePointer(to: &address) { pointer in
            try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                guard bind(listener, $0, length) == 0, listen(listener, 1) == 0,
                    getsockname(listener, $0, &length) == 0
                else { throw Failure() }
            }
        }
        let bytes = Array(answer.utf8)
        let thread = Thread {
            let connection = accept(listener, nil, nil)
            var request = [UInt8](repeating: 0, count: 4096)
            _ = recv(connection, &request, request.count, 0)
            var offset = 0
            while offset < bytes.count {
                let end = min(offset + piece, bytes.count)
                _ = bytes[offset..<end].withUnsafeBytes { send(connection, $0.baseAddress, $0.count, 0) }
                offset = end
                usleep(1000)
            }
            // The listener first: once the client sees the end, nothing listens on the port any more.
            close(listener)
            close(connection)
        }
        thread.start()
        return Int32(UInt16(bigEndian: address.sin_port))
    }

    struct Failure: Error {}

    @Test func readsAnAnswerArrivingInPieces() throws {
        let body = String(repeating: "concierge_requests_in_flight 1\n", count: 200)
        let port = try Self.serveOnce(
            "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)",
            piece: 97)
        let answer = try HTTPGet.get(host: "127.0.0.1", port: Int(port), path: "/metrics", timeout: .seconds(10))
        #expect(answer.status == 200)
        #expect(answer.body == body)
    }

    @Test func givesTheStatusOfAnErrorAnswer() throws {
        let port = try Self.serveOnce(
            "HTTP/1.1 503 Service Unavailable\r\ncontent-length: 19\r\n\r\nnot ready: standby\n", piece: 5)
        let answer = try HTTPGet.get(host: "localhost", port: Int(port), path: "/readyz", timeout: .seconds(10))
        #expect(answer == HTTPGet.Answer(status: 503, body: "not ready: standby\n"))
    }

    @Test func decodesAChunkedBodyAndReadsToTheEndWithoutALength() throws {
        let chunked = try Self.serveOnce(
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n7;x=y\r\n, world\r\n0\r\n\r\n", piece: 3
        )
        #expect(
            try HTTPGet.get(host: "127.0.0.1", port: Int(chunked), path: "/", timeout: .seconds(10)).body
                == "hello, world")
        let unsized = try Self.serveOnce("HTTP/1.0 200 OK\r\n\r\nuntil the end", piece: 4)
        #expect(
            try HTTPGet.get(host: "127.0.0.1", port: Int(unsized), path: "/", timeout: .seconds(10)).body
                == "until the end")
    }

    @Test func aBodyCutShortIsAnError() throws {
        let port = try Self.serveOnce("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nshort", piece: 100)
        #expect(throws: HTTPGetError.self) {
            try HTTPGet.get(host: "127.0.0.1", port: Int(port), path: "/", timeout: .seconds(10))
        }
    }

    @Test func aClosedPortIsRefusedAndAnUnknownHostDoesNotResolve() throws {
        // A port nothing listens on: bind one, note it, close it.
        let port = try Self.serveOnce("", piece: 1)
        _ = try? HTTPGet.get(host: "127.0.0.1", port: Int(port), path: "/", timeout: .seconds(10))
        do {
            _ = try HTTPGet.get(host: "127.0.0.1", port: Int(port), path: "/", timeout: .seconds(10))
            Issue.record("a closed port answered")
        } catch {
            #expect(error.code == .connection)
            #expect(error.message.contains("refused"))
        }
        do {
            _ = try HTTPGet.get(host: "no-such-host.invalid", port: 80, path: "/", timeout: .seconds(10))
            Issue.record("an unknown host resolved")
        } catch {
            #expect(error.code == .resolution)
        }
    }
}
