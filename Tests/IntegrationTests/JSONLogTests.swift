import ConciergeCommandLine
import ConciergeJSON
import ConciergeTestKit
import Logging
import Synchronization
import Testing

/// `--log-format json`: one JSON object per line, with the level, label, message, source and metadata.
@Suite struct JSONLogHandlerTests {
    @Test func aLineIsOneJSONObjectWithItsMetadataInShape() throws {
        let lines = Mutex<[[UInt8]]>([])
        var handler = JSONLogHandler(label: "concierge.test") { line in lines.withLock { $0.append(line) } }
        handler.logLevel = .debug
        handler[metadataKey: "worker"] = "w1"
        let logger = Logger(label: "concierge.test") { _ in handler }
        logger.warning(
            "a \"quoted\" message\nover two lines",
            metadata: ["intents": ["Echo", "SendPayment"], "limits": ["capacity": "4"], "count": "\(3)"])
        let written = lines.withLock { $0 }
        try #require(written.count == 1)
        #expect(written[0].last == UInt8(ascii: "\n"))
        #expect(written[0].dropLast().contains(UInt8(ascii: "\n")) == false, "one line per entry")
        let object = try JSONValue.parse(Array(written[0].dropLast()))
        #expect(object["level"] == "warning")
        #expect(object["label"] == "concierge.test")
        #expect(object["message"] == "a \"quoted\" message\nover two lines")
        #expect(object["metadata"]?["worker"] == "w1")
        #expect(object["metadata"]?["intents"] == ["Echo", "SendPayment"])
        #expect(object["metadata"]?["limits"]?["capacity"] == "4")
        let time = try #require(object["time"]?.stringValue)
        #expect(time.count == 24 && time.hasSuffix("Z") && time.dropFirst(10).first == "T", "\(time)")
    }
}

extension EndToEnd {
    @Suite(.serialized) struct JSONLogTests {
        @Test func aBrokerAndItsPoolLogJSONLinesWhenAsked() async throws {
            let cluster = try Cluster()
            try cluster.start(
                "broker",
                ["broker", "--frontend", cluster.frontend, "--backend", cluster.backend, "--log-format", "json"])
            try cluster.start(
                "pool",
                [
                    "pool", "--broker", cluster.backend, "--workers", "1", "--control", cluster.control,
                    "--log-format", "json",
                ])
            try await waitUntil("the broker logs a worker registered\n\(cluster.log("broker"))") {
                cluster.log("broker").contains("worker registered")
            }
            for name in ["broker", "pool"] {
                let lines = cluster.log(name).split(separator: "\n").filter { !$0.isEmpty }
                #expect(!lines.isEmpty)
                for line in lines {
                    let object = try JSONValue.parse(Array(line.utf8))
                    #expect(object["level"]?.stringValue != nil && object["message"]?.stringValue != nil, "\(line)")
                }
            }
            let ready = try #require(
                cluster.log("broker").split(separator: "\n").compactMap { try? JSONValue.parse(Array($0.utf8)) }
                    .first { $0["message"] == "broker ready" })
            #expect(ready["metadata"]?["frontend"]?.stringValue == cluster.frontend)
            #expect(ready["label"] == "concierge.broker")
        }
    }
}
