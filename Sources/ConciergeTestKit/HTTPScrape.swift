public import ConciergeTop

/// A GET on 127.0.0.1 (tests of `--http`), with `concierge top`'s client: the status code and the body.
public func httpGet(port: Int, _ path: String) throws -> (status: Int, body: String) {
    let answer = try HTTPGet.get(host: "127.0.0.1", port: port, path: path, timeout: .seconds(10))
    return (answer.status, answer.body)
}

/// One scrape of a Prometheus text exposition, parsed as `concierge top` parses it.
public typealias Scrape = MetricsScrape

extension MetricsScrape {
    public init(_ text: String) { self.init(parsing: text) }

    /// Whether a series named `name` is exposed at all.
    public func has(_ name: String) -> Bool { contains(name) }
}
