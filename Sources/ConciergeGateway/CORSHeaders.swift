import HTTPTypes
import Hummingbird

/// Cross-origin answers for browsers (`--cors-origin`): a preflight `OPTIONS` is answered here, and every other
/// answer, problems included, says which origin may read it and which of its headers (`Location`,
/// `Concierge-Request-Id`, ...) a script may see. (Hummingbird's CORS middleware names the exposed headers in the
/// preflight only, where browsers do not look for them.)
struct CORSHeaders: RouterMiddleware {
    typealias Context = BasicRequestContext
    let origin: String

    static let allowedHeaders =
        "Accept, Authorization, Content-Type, Idempotency-Key, Concierge-Deadline, Conversation-Id, traceparent, "
        + "tracestate, Last-Event-ID, Cache-Control"
    static let exposedHeaders =
        "Location, Retry-After, Concierge-Request-Id, Idempotent-Replayed, Conversation-Id"

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        guard request.headers[.origin] != nil else { return try await next(request, context) }
        if request.method == .options {
            return Response(
                status: .noContent,
                headers: [
                    .accessControlAllowOrigin: origin, .accessControlAllowMethods: "GET, POST, DELETE",
                    .accessControlAllowHeaders: Self.allowedHeaders, .accessControlMaxAge: "600", .vary: "Origin",
                ])
        }
        var response = try await next(request, context)
        response.headers[.accessControlAllowOrigin] = origin
        response.headers[.accessControlExposeHeaders] = Self.exposedHeaders
        response.headers[values: .vary].append("Origin")
        return response
    }
}
