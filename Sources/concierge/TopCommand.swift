import ArgumentParser
import ConciergeTop
import Glibc

/// `concierge top`: a live terminal view of a running broker, read from its `/metrics` and `/readyz`
/// (`concierge broker --http`), redrawn every interval.
struct TopCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "top",
        abstract: "A live view of a running broker: workers, capacity, queues and their oldest waits, rates, p99.",
        discussion: """
            Reads the broker's /metrics and /readyz (start the broker with --http HOST:PORT) every interval and \
            redraws the screen: readiness, requests in flight, workers and capacity used; per intent type the queue \
            depth, the oldest wait, requests/s ended by outcome (final, busy, other errors) and the handlers' p99; \
            per worker the jobs it holds of its slots and jobs/s; first- and final-reply p99 and the journal. Rates \
            and p99s are over the last interval. Requests the broker counted without an intent type (unknown-intent, \
            malformed) are the row "(unknown type)". An unreachable broker is shown as such and asked again every \
            interval. --once prints one frame (two scrapes an interval apart) without escape codes, for scripts; \
            against a broker that does not answer it prints why on standard error and exits 1.
            """
    )

    @Option(
        help: ArgumentHelp(
            "The broker's --http address: HOST:PORT or http://HOST:PORT.", valueName: "host:port"))
    var http: String

    @Option(help: "Milliseconds between refreshes (and the window of rates and p99s).")
    var intervalMs = 1000

    @Flag(
        help:
            "Print one frame as plain text and exit (1, with the reason on standard error, if the broker did not answer)."
    )
    var once = false

    @Option(help: "Stop after this many frames (default: until interrupted).")
    var iterations: Int?

    func validate() throws {
        do { _ = try TopTarget(parsing: http) } catch { throw ValidationError(error.description) }
        guard (100...3_600_000).contains(intervalMs) else {
            throw ValidationError("--interval-ms must be from 100 to 3600000")
        }
        if let iterations, iterations < 1 { throw ValidationError("--iterations must be at least 1") }
    }

    func run() throws {
        let target = try TopTarget(parsing: http)
        let interval = Duration.milliseconds(intervalMs)
        // A scrape may take up to an interval (at least half a second, at most 5 s) before the broker counts as
        // unreachable for this frame.
        let timeout = Duration.milliseconds(min(max(intervalMs, 500), 5000))
        let clock = ContinuousClock()
        var previous: (scrape: MetricsScrape, at: ContinuousClock.Instant)?
        var lastAnswer: ContinuousClock.Instant?
        var frames = 0
        var next = clock.now
        let seconds = Double(intervalMs) / 1000
        if !once { Terminal.write("\u{1B}[2J") }
        while true {
            let now = clock.now
            let result = BrokerScrape.fetch(target, timeout: timeout)
            var state = TopScreen.State(
                target: target.description, clock: Terminal.utcClock(), interval: seconds, current: result.metrics,
                previous: previous?.scrape,
                elapsed: previous.map { Self.seconds($0.at.duration(to: now)) } ?? 0,
                ready: result.ready, failure: result.failure,
                secondsSinceLastAnswer: lastAnswer.map { Self.seconds($0.duration(to: now)) })
            if result.metrics == nil { state.previous = nil }
            let size = Terminal.size()
            if let metrics = result.metrics {
                previous = (metrics, now)
                lastAnswer = now
            }
            frames += 1
            if once, result.metrics == nil {
                // For scripts: no frame saying "retrying" (it does not), but why, on standard error, and status 1.
                let reason = result.failure ?? "\(target): no answer"
                Terminal.write(
                    "concierge top: the broker's /metrics did not answer: \(reason) (is the broker running with "
                        + "--http \(target)?)\n", to: STDERR_FILENO)
                throw ExitCode(1)
            }
            if once {
                // One frame with rates needs two scrapes: print the second.
                if frames >= 2 {
                    let lines = TopScreen.render(state, width: size.width, height: Int.max)
                    Terminal.write(lines.joined(separator: "\n") + "\n")
                    return
                }
            } else {
                let lines = TopScreen.render(state, width: size.width, height: size.height)
                Terminal.write("\u{1B}[H" + lines.map { $0 + "\u{1B}[K" }.joined(separator: "\n") + "\u{1B}[J")
                if let iterations, frames >= iterations {
                    Terminal.write("\n")
                    return
                }
            }
            next = next + interval
            let current = clock.now
            if next < current { next = current }
            try? clock.sleepUntilBlocking(next)
        }
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}

/// One refresh's answers from the broker.
enum BrokerScrape {
    struct Result {
        var metrics: MetricsScrape?
        var ready: (isReady: Bool, detail: String)?
        var failure: String?
    }

    static func fetch(_ target: TopTarget, timeout: Duration) -> Result {
        var result = Result()
        do {
            let answer = try HTTPGet.get(host: target.host, port: target.port, path: "/metrics", timeout: timeout)
            guard answer.status == 200 else {
                result.failure = "/metrics answered HTTP \(answer.status)"
                return result
            }
            result.metrics = MetricsScrape(parsing: answer.body)
        } catch {
            result.failure = "\(target): \(error.message)"
            return result
        }
        if let answer = try? HTTPGet.get(host: target.host, port: target.port, path: "/readyz", timeout: timeout) {
            let line = answer.body.split(separator: "\n").first.map(String.init) ?? ""
            result.ready = (answer.status == 200, line.isEmpty ? "HTTP \(answer.status)" : line)
        }
        return result
    }
}

/// The terminal `concierge top` draws on.
enum Terminal {
    /// Columns and rows: the terminal's (TIOCGWINSZ), else $COLUMNS and $LINES, else 100 by 40.
    static func size() -> (width: Int, height: Int) {
        var window = winsize()
        if ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &window) == 0, window.ws_col > 0, window.ws_row > 0 {
            return (Int(window.ws_col), Int(window.ws_row))
        }
        func environment(_ name: String) -> Int? {
            guard let value = getenv(name), let number = Int(String(cString: value)), number > 0 else { return nil }
            return number
        }
        return (environment("COLUMNS") ?? 100, environment("LINES") ?? 40)
    }

    /// Writes `text` to standard output (or `descriptor`) at once (one frame, no flicker).
    static func write(_ text: String, to descriptor: Int32 = STDOUT_FILENO) {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
            if written < 0 {
                if errno == EINTR { continue }
                return
            }
            bytes = bytes.dropFirst(written)
        }
    }

    /// The time now in UTC, `HH:MM:SS UTC`.
    static func utcClock() -> String {
        var now = time(nil)
        var parts = tm()
        gmtime_r(&now, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) UTC"
    }
}

extension ContinuousClock {
    /// Sleeps the calling thread until `deadline` (the command runs no tasks: a blocking sleep is simplest).
    func sleepUntilBlocking(_ deadline: Instant) throws {
        while true {
            let left = now.duration(to: deadline)
            guard left > .zero else { return }
            var request = timespec(
                tv_sec: Int(left.components.seconds), tv_nsec: Int(left.components.attoseconds / 1_000_000_000))
            var remaining = timespec()
            if nanosleep(&request, &remaining) == 0 { return }
            guard errno == EINTR else { return }
        }
    }
}
