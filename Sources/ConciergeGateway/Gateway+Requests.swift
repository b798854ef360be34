import ConciergeJSON
import HTTPTypes
import Hummingbird
import IntentClient
import IntentWire
import Synchronization
import Tracing

/// `/v1/requests`: submit (a response, or an event stream), long poll, cancel.
extension Gateway {
    func submit(_ request: Request, context: BasicRequestContext) async throws -> Response {
        let (identity, client) = try authenticate(request)
        guard !draining.load(ordering: .relaxed) else { throw Self.shuttingDown }
        let query = request.uri.queryParameters
        let phase = try RequestInput.phase(query)
        let deadline = try RequestInput.deadline(request, query: query)
        let definitionVersion = try RequestInput.definitionVersion(query)
        let key = try RequestInput.idempotencyKey(request)
        let trace = TraceContext.incoming(request.headers)
        let (sent, json) = try await RequestInput.jsonBody(request, limit: configuration.maxBodyBytes)
        let intentType = try RequestInput.interaction(json).intentType
        try checkPermission(identity, intentType: intentType, phase: phase)
        let id = makeRequestID()
        let wireType = ConciergeClient.wireIntentType(intentType, definitionVersion: definitionVersion)
        let (outgoing, span) = GatewayTrace.start(
            requestID: id, intentType: wireType, phase: phase, trace: trace, tracing: configuration.tracing)
        let table = self.table
        let tracked = TrackedRequest(id: id, identity: identity) { tracked in
            table.ended(tracked)
            GatewayTrace.end(span, outcome: tracked.snapshot.outcome)
        }
        table.add(tracked)
        // A keyed request's body is written again in one form (sorted keys, no spaces), so that a retry of the same
        // JSON written otherwise is the same request to the broker's fingerprint; any other goes as the caller sent
        // it (it parsed, and it is an Interaction). The replies go straight into `tracked`, on the client's thread:
        // the request goes on when the caller goes away.
        let handle = client.send(
            intentType: wireType, phase: phase, body: key == nil ? sent : json.serialized(), deadline: deadline,
            requestID: id,
            idempotencyKey: key.map { Self.brokerKey($0, of: identity, scoped: clients.requiresToken) },
            traceContext: outgoing, handler: { tracked.receive($0) })
        tracked.attach(handle)
        sweeper.watch(tracked, on: client, wait: deadline ?? configuration.defaultDeadline)
        // The head waits for the first reply (at most the deadline: the sweeper ends the request then when no
        // broker answers), so that it can say whether it is a replay.
        let first = await tracked.firstReply()
        if RequestInput.wantsEventStream(request) { return eventStream(tracked, first: first) }
        return respond(first, id: id)
    }

    /// New work while draining: 503 `shutting-down` (the answer carries `Connection: close`, ProblemMiddleware).
    static let shuttingDown = GatewayProblem(
        code: "shutting-down", detail: "the gateway is shutting down; send it to another gateway", retryAfterSeconds: 1)

    func poll(_ request: Request, context: BasicRequestContext) async throws -> Response {
        let (identity, client) = try authenticate(request)
        let id = try RequestInput.pathID(context, code: "bad-request-id")
        let wait = try RequestInput.wait(request)
        if let tracked = table.request(id, of: identity) {
            if RequestInput.wantsEventStream(request) { return eventStream(tracked, first: tracked.snapshot) }
            var snapshot = tracked.snapshot
            let end = ContinuousClock.now + wait
            while snapshot.ending == nil && !snapshot.shuttingDown && ContinuousClock.now < end {
                snapshot = await tracked.wait(after: snapshot.version, timeout: end - ContinuousClock.now)
            }
            return respond(snapshot, id: id)
        }
        // Not sent through this gateway process (or forgotten): the broker knows it if this identity sent it.
        let reply = try await brokerCall(requestID: id) { try await client.status(of: id) }
        if RequestInput.wantsEventStream(request) && reply.isFinal == false {
            throw GatewayProblem(
                code: "unknown-request", detail: "request \(id) was not sent through this gateway process",
                requestID: id)
        }
        return respond(reply, id: id)
    }

    func cancel(_ request: Request, context: BasicRequestContext) async throws -> Response {
        let (_, client) = try authenticate(request)
        let id = try RequestInput.pathID(context, code: "bad-request-id")
        return respond(try await brokerCall(requestID: id) { try await client.cancel(requestID: id) }, id: id)
    }

    // MARK: Answers

    /// A reply as an answer: 200 with a final body, 202 with a progress body, a problem for an error.
    func respond(_ reply: Reply, id: String) -> Response {
        var headers: HTTPFields = [.contentType: "application/json", GatewayHeaders.requestID: id]
        switch reply.status {
        case .final:
            if reply.isReplay { headers[GatewayHeaders.replayed] = "true" }
            return Response(
                status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: reply.body)))
        case .progress:
            headers[.location] = "/v1/requests/\(id)"
            return Response(
                status: .accepted, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: reply.body)))
        case .error:
            var extra: HTTPFields = [:]
            if reply.isReplay { extra[GatewayHeaders.replayed] = "true" }
            return GatewayProblem(errorBody: reply.body, requestID: id).response(headers: extra)
        }
    }

    func respond(_ snapshot: TrackedRequest.Snapshot, id: String) -> Response {
        switch snapshot.ending {
        case .reply(let reply): return respond(reply, id: id)
        case .failure(let problem): return problem.response()
        case nil: break
        }
        if snapshot.shuttingDown {
            return GatewayProblem(
                code: "shutting-down", detail: "the gateway is shutting down; ask again elsewhere", requestID: id
            ).response()
        }
        if let progress = snapshot.progress { return respond(progress, id: id) }
        // Sent, not answered yet (a long poll with wait=0 right after an event stream started it).
        let body: JSONValue = ["state": "queued", "phase": "resolve", "elapsed_ms": 0]
        return Response(
            status: .accepted,
            headers: [.contentType: "application/json", GatewayHeaders.requestID: id, .location: "/v1/requests/\(id)"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: body.serialized())))
    }

    /// Server-sent events: `progress` (at most one), then `final` or `error`; comments keep an idle stream alive.
    func eventStream(_ tracked: TrackedRequest, first: TrackedRequest.Snapshot) -> Response {
        var headers: HTTPFields = [
            .contentType: "text/event-stream", .cacheControl: "no-cache", GatewayHeaders.requestID: tracked.id,
        ]
        if case .reply(let reply) = first.ending, reply.isReplay { headers[GatewayHeaders.replayed] = "true" }
        let keepAlive = configuration.keepAliveInterval
        let gateway = self
        return Response(
            status: .ok, headers: headers,
            body: ResponseBody { writer in
                gateway.metrics.openStreams(gateway.openStreams.wrappingAdd(1, ordering: .relaxed).newValue)
                defer {
                    gateway.metrics.openStreams(gateway.openStreams.wrappingSubtract(1, ordering: .relaxed).newValue)
                }
                var snapshot = first
                var sentProgress = false
                events: while true {
                    if let progress = snapshot.progress, !sentProgress {
                        sentProgress = true
                        try await writer.write(ServerSentEvents.event("progress", id: tracked.id, data: progress.body))
                    }
                    if let ending = snapshot.ending {
                        switch ending {
                        case .reply(let reply):
                            let name = reply.status == .final ? "final" : "error"
                            let data =
                                reply.status == .final
                                ? reply.body
                                : GatewayProblem(errorBody: reply.body, requestID: tracked.id).json.serialized()
                            try await writer.write(ServerSentEvents.event(name, id: tracked.id, data: data))
                        case .failure(let problem):
                            try await writer.write(
                                ServerSentEvents.event("error", id: tracked.id, data: problem.json.serialized()))
                        }
                        break events
                    }
                    if snapshot.shuttingDown {
                        let problem = GatewayProblem(
                            code: "shutting-down", detail: "the gateway is shutting down before the request ended",
                            requestID: tracked.id)
                        try await writer.write(
                            ServerSentEvents.event("error", id: tracked.id, data: problem.json.serialized()))
                        break events
                    }
                    let next = await tracked.wait(after: snapshot.version, timeout: keepAlive)
                    if next.version == snapshot.version && !next.shuttingDown {
                        try await writer.write(ServerSentEvents.keepAlive)
                    }
                    snapshot = next
                }
                try await writer.finish(nil)
            })
    }

    // MARK: Helpers

    /// A question to the broker (STATUS, CANCEL, a conversation's read or END), its wait bounded by the default
    /// deadline: 503 `unavailable` (`Retry-After`) when no broker answers by then; the client's errors as problems.
    func brokerCall<T: Sendable>(
        requestID: String?, _ operation: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        let outcome = await Self.within(configuration.defaultDeadline) { () async -> Result<T, any Error> in
            do {
                return .success(try await operation())
            } catch {
                return .failure(error)
            }
        }
        switch outcome {
        case nil:
            throw GatewayProblem(
                code: "unavailable",
                detail:
                    "no broker answered within \(configuration.defaultDeadline); ask again when /readyz answers 200",
                requestID: requestID, retryAfterSeconds: 1)
        case .success(let value)?:
            return value
        case .failure(let error as ClientError)?:
            throw Self.problem(error, requestID: requestID)
        case .failure(let error)?:
            throw error
        }
    }

    /// A client error as a problem: the broker's error body when it answered one.
    static func problem(_ error: ClientError, requestID: String?) -> GatewayProblem {
        if let reply = error.reply { return GatewayProblem(errorBody: reply.body, requestID: requestID) }
        var problem = GatewayProblem(code: error.code.rawValue, detail: error.message, requestID: requestID)
        if error.code == .throttled { problem.retryAfterSeconds = 1 }
        return problem
    }

    /// The broker scopes keys by CURVE key, else not at all (PROTOCOL.md 4.10.1): with tokens, the identity is put
    /// in front of the key so that two identities never share one (a digest stands in for a key that would then be
    /// too long).
    static func brokerKey(_ key: String, of identity: GatewayIdentity, scoped: Bool) -> String {
        guard scoped else { return key }
        let prefixed = "\(identity.name):\(key)"
        if prefixed.utf8.count <= CIP.maxIdempotencyKeyLength { return prefixed }
        var first: UInt64 = 0xcbf2_9ce4_8422_2325
        var second: UInt64 = 0x8422_2325_cbf2_9ce4
        for byte in key.utf8 {
            first = (first ^ UInt64(byte)) &* 0x100_0000_01b3
            second = (second &* 0x100_0000_01b3) ^ UInt64(byte)
        }
        let digest = String(first, radix: 16) + String(second, radix: 16)
        return "\(identity.name.prefix(200)):#\(digest)"
    }
}
