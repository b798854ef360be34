import ConciergeTop
import Testing

@Suite struct TopScreenTests {
    static func state(
        current: MetricsScrape? = RateTests.current, previous: MetricsScrape? = RateTests.previous
    ) -> TopScreen.State {
        TopScreen.State(
            target: "127.0.0.1:9464", clock: "12:00:00 UTC", interval: 1, current: current, previous: previous,
            elapsed: 2, ready: (true, "ready: 2 workers"), failure: current == nil ? "connection refused" : nil,
            secondsSinceLastAnswer: current == nil ? 12 : 0)
    }

    @Test func showsQueuesWorkersAndRates() throws {
        let lines = TopScreen.render(Self.state(), width: 160, height: 50)
        #expect(lines[0].contains("127.0.0.1:9464") && lines[0].contains("12:00:00 UTC"))
        #expect(lines[1] == "READY  ready: 2 workers")
        let echo = try #require(lines.first { $0.hasPrefix("Echo ") })
        let cells = echo.split(separator: " ")
        // QUEUE OLDEST FINAL/s BUSY/s ERR/s RUN p99 FINAL BUSY ERRORS
        #expect(cells == ["Echo", "5", "1.50s", "22.0", "0.0", "1.5", "-", "144", "10", "4"])
        let alpha = try #require(lines.first { $0.hasPrefix("alpha ") })
        #expect(alpha.split(separator: " ") == ["alpha", "2/2", "11.0", "82"])
        let beta = try #require(lines.first { $0.hasPrefix("beta ") })
        #expect(beta.split(separator: " ") == ["beta", "1/1", "10.0", "20"])
        #expect(lines.contains { $0.hasPrefix("since start: 144 final, 10 busy, 4 other errors") })
    }

    @Test func everyLineFitsTheWidthAndTheScreenFitsTheHeight() {
        for width in [20, 40, 60, 80, 100, 120, 200] {
            for height in [3, 8, 12, 50] {
                for state in [Self.state(), Self.state(current: nil)] {
                    let lines = TopScreen.render(state, width: width, height: height)
                    #expect(lines.allSatisfy { $0.count <= width }, "width \(width): \(lines)")
                    #expect(lines.count <= height, "height \(height): \(lines)")
                }
            }
        }
    }

    @Test func anEightyColumnTerminalShowsEveryColumn() throws {
        let lines = TopScreen.render(Self.state(), width: 80, height: 50)
        let header = try #require(lines.first { $0.hasPrefix("INTENT ") })
        #expect(header.hasSuffix(" ERRORS"), "\(header)")
        let echo = try #require(lines.first { $0.hasPrefix("Echo ") })
        #expect(echo.split(separator: " ").count == 10, "\(echo)")
        let worker = try #require(lines.first { $0.hasPrefix("WORKER ") })
        #expect(worker.hasSuffix(" JOBS"), "\(worker)")
        // Nothing is cut: no line ends in an ellipsis.
        #expect(!lines.contains { $0.hasSuffix("…") }, "\(lines)")
    }

    @Test func requestsWithoutAnIntentTypeHaveARowNamedSoAndDurationsHaveUnits() throws {
        let text = """
            concierge_queue_depth{intent="Echo"} 0
            concierge_queue_oldest_age_seconds{intent="Echo"} 0
            concierge_requests_total{intent="Echo",phase="handle",outcome="final"} 3
            concierge_requests_total{intent="",phase="handle",outcome="unknown-intent"} 7

            """
        let lines = TopScreen.render(
            Self.state(current: MetricsScrape(parsing: text), previous: nil), width: 80, height: 50)
        let unknown = try #require(lines.first { $0.hasPrefix(TopScreen.unknownTypeName) }, "\(lines)")
        #expect(unknown.hasSuffix(" 7"), "\(unknown)")
        #expect(!lines.contains { $0.hasPrefix(" ") }, "a row without a name: \(lines)")
        // Named types first, then the requests without one.
        let echoIndex = try #require(lines.firstIndex { $0.hasPrefix("Echo ") })
        let unknownIndex = try #require(lines.firstIndex { $0.hasPrefix(TopScreen.unknownTypeName) })
        #expect(echoIndex < unknownIndex)
        // OLDEST, empty queue: 0s, not a bare 0.
        let echo = try #require(lines.first { $0.hasPrefix("Echo ") })
        #expect(echo.split(separator: " ")[2] == "0s", "\(echo)")
    }

    @Test func conversationsShowWhereTheyEndAndWhatIsAskedMost() throws {
        let text = """
            concierge_conversations_open 2
            concierge_conversations_started_total{intent="SendMessage"} 9
            concierge_conversations_ended_total{intent="SendMessage",ending="completed"} 4
            concierge_conversations_ended_total{intent="SendMessage",ending="too-many-asks"} 2
            concierge_conversations_ended_total{intent="SendMessage",ending="expired"} 1
            concierge_conversation_turns_sum{intent="SendMessage"} 21
            concierge_conversation_turns_count{intent="SendMessage"} 7
            concierge_conversation_asks_total{intent="SendMessage",parameter="recipient"} 12
            concierge_conversation_asks_total{intent="SendMessage",parameter="content"} 3

            """
        let lines = TopScreen.render(
            Self.state(current: MetricsScrape(parsing: text), previous: nil), width: 120, height: 50)
        let line = try #require(lines.first { $0.hasPrefix("conversations ") }, "\(lines)")
        #expect(line == "conversations 2 open, 9 started: 4 completed, 2 too-many-asks, 1 expired  3.0 turns each")
        #expect(lines.contains("most asked: SendMessage.recipient 12, SendMessage.content 3"))
        // Without conversations, no line.
        #expect(!TopScreen.render(Self.state(), width: 120, height: 50).contains { $0.hasPrefix("conversations") })
    }

    @Test func aShortScreenSaysHowManyRowsItLeftOut() {
        var text = ""
        for index in 0..<30 {
            text += "concierge_worker_slots{worker=\"w\(index < 10 ? "0" : "")\(index)\"} 4\n"
        }
        let lines = TopScreen.render(
            Self.state(current: MetricsScrape(parsing: text), previous: nil), width: 100, height: 20)
        #expect(lines.count == 20)
        #expect(lines.contains { $0.hasPrefix("w00 ") })
        #expect(lines.last?.hasPrefix("… ") == true && lines.last?.hasSuffix(" more") == true)
    }

    @Test func anUnreachableBrokerIsSaidSo() {
        let lines = TopScreen.render(Self.state(current: nil), width: 100, height: 40)
        #expect(lines.count == 3)
        #expect(lines[1] == "UNREACHABLE  connection refused")
        #expect(lines[2] == "retrying every 1.00s; last answer 12.0s ago")
    }

    @Test func formatsDurationsAndRatesForPeople() {
        #expect(Format.duration(nil) == "-")
        #expect(Format.duration(0) == "0s")
        #expect(Format.duration(0.000_85) == "850µs")
        #expect(Format.duration(0.012_34) == "12.3ms")
        #expect(Format.duration(0.25) == "250ms")
        #expect(Format.duration(1.254) == "1.25s")
        #expect(Format.duration(12.5) == "12.5s")
        #expect(Format.duration(123) == "2m03s")
        #expect(Format.rate(0.04) == "0.0")
        #expect(Format.rate(2.25) == "2.3")
        #expect(Format.rate(1234.4) == "1234")
        #expect(Format.count(3.6) == "4")
    }
}
