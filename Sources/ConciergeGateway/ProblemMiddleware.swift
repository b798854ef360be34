import HTTPTypes
import Hummingbird

/// Turns every error of a route into a problem document (and counts every answer): a ``GatewayProblem`` as it is,
/// Hummingbird's own errors (no such route, a body over its limit) by their status, anything else as `internal`.
///
/// While the gateway drains, every answer carries `Connection: close`, so that callers move to another gateway.
struct ProblemMiddleware: RouterMiddleware {
    typealias Context = BasicRequestContext
    let metrics: GatewayMetrics
    /// Whether the gateway is draining.
    let draining: @Sendable () -> Bool

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        let started = ContinuousClock.now
        var response: Response
        do {
            response = try await next(request, context)
        } catch let problem as GatewayProblem {
            response = problem.response(headers: Self.headers(for: problem))
        } catch let error as HTTPError where error.status.code == 404 && !Self.allowed(request.uri.path).isEmpty {
            // The path is a route, the method is not one of its own.
            let allowed = Self.allowed(request.uri.path)
            let problem = GatewayProblem(
                code: "method-not-allowed", detail: "\(request.uri.path) answers \(allowed)")
            response = problem.response(headers: [.allow: allowed])
        } catch let error as HTTPError {
            let code: String =
                switch error.status.code {
                case 404: "not-found"
                case 405: "method-not-allowed"
                case 413: "body-too-large"
                case 415: "unsupported-media-type"
                case 400..<500: "bad-request"
                default: "internal"
                }
            let problem = GatewayProblem(code: code, detail: error.body ?? error.status.reasonPhrase)
            response = problem.response(headers: Self.headers(for: problem))
        } catch {
            response = GatewayProblem(code: "internal", detail: "\(error)").response()
        }
        if draining() { response.headers[.connection] = "close" }
        // HEAD: the status and headers GET would have, no content (RFC 9110 9.3.2), problems included.
        if request.method == .head { response = response.createHeadResponse() }
        metrics.answered(status: response.status.code)
        metrics.took(ContinuousClock.now - started, route: Self.route(request.uri.path))
        return response
    }

    /// Every route's name in metrics.
    static let routes = [
        "other", "/livez", "/readyz", "/metrics", "/v1/requests", "/v1/conversations", "/v1/requests/{id}",
        "/v1/conversations/{id}", "/v1/conversations/{id}/turns",
    ]

    /// The methods of the route `path` matches (empty: no route).
    static func allowed(_ path: String) -> String {
        let parts = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map(String.init)
        if parts.contains("") { return "" }
        switch parts.count {
        case 1: return ["livez", "readyz", "metrics"].contains(parts[0]) ? "GET, HEAD" : ""
        case 2: return parts[0] == "v1" && ["requests", "conversations"].contains(parts[1]) ? "POST" : ""
        case 3: return parts[0] == "v1" && ["requests", "conversations"].contains(parts[1]) ? "GET, DELETE" : ""
        case 4: return parts[0] == "v1" && parts[1] == "conversations" && parts[3] == "turns" ? "POST" : ""
        default: return ""
        }
    }

    /// The route's name in metrics: the documented path with its ids left out (`other` for any other path, so that
    /// a scan of random paths cannot make new series).
    static func route(_ path: String) -> String {
        if path == "/v1/requests" { return path }  // the busiest, without splitting it
        let parts = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map(String.init)
        switch (parts.count, allowed(path)) {
        case (_, ""): return "other"
        case (1, _): return "/" + parts[0]
        case (2, _): return "/v1/" + parts[1]
        case (3, _): return "/v1/\(parts[1])/{id}"
        default: return "/v1/conversations/{id}/turns"
        }
    }

    private static func headers(for problem: GatewayProblem) -> HTTPFields {
        problem.code == "unauthorized" ? [.wwwAuthenticate: "Bearer realm=\"concierge\""] : [:]
    }
}
