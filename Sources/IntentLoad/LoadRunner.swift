import Histogram
import IntentWire
import Synchronization
import ZeroMQ

/// Drives a broker with load and measures it: closed loop (N in flight) or open loop (a fixed arrival rate),
/// over M DEALER connections, all from one thread of its own.
///
/// The load thread speaks CIP/1 directly on raw sockets (no per-request tasks or continuations) and drains
/// every reply waiting on each wake-up, so that the client stays far cheaper per request than the broker it
/// measures.
///
/// ```swift
/// let runner = try LoadRunner(configuration: .init(endpoint: "tcp://127.0.0.1:5555"), workload: .echo())
/// let summary = try await runner.run { print($0.line) }
/// print(summary.throughputRPS, summary.finalReply.p99)
/// ```
public final class LoadRunner: Sendable {
    public let configuration: LoadConfiguration
    public let workload: LoadWorkload
    private let stopFlag = StopFlag()

    public init(configuration: LoadConfiguration, workload: LoadWorkload) throws(LoadError) {
        try configuration.validate()
        self.configuration = configuration
        self.workload = workload
    }

    /// Ends the offering early (any thread, e.g. on Ctrl-C); outstanding requests are still waited for.
    public func stop() {
        stopFlag.value.store(true, ordering: .relaxed)
    }

    /// Runs the load on a thread of its own and returns its summary.
    public func run(progress: (@Sendable (LoadProgress) -> Void)? = nil) async throws(LoadError) -> LoadSummary {
        let result = Mutex<Result<LoadSummary, LoadError>?>(nil)
        await SocketThread.run(name: "concierge-load") {
            let outcome: Result<LoadSummary, LoadError>
            do throws(LoadError) {
                outcome = .success(try self.runBlocking(progress: progress))
            } catch {
                outcome = .failure(error)
            }
            result.withLock { $0 = outcome }
        }
        return try result.withLock { $0! }.get()
    }

    /// Runs the load on the calling thread (blocks until the run ends).
    public func runBlocking(progress: ((LoadProgress) -> Void)? = nil) throws(LoadError) -> LoadSummary {
        let context = ZMQContext()
        defer { context.terminate() }
        var engine: LoadEngine
        do {
            engine = try LoadEngine(
                configuration: configuration, workload: workload, context: context, stopFlag: stopFlag
            )
        } catch {
            throw LoadError(code: .socket, message: "\(error)")
        }
        defer { engine.close() }
        return try engine.run(progress: progress)
    }
}

/// The load thread's state and loop (used by ``LoadRunner`` only).
struct LoadEngine: ~Copyable {
    /// One request in flight.
    struct InFlight {
        var intended: UInt64
        var sent: UInt64
        var firstReplyAt: UInt64 = 0
        var connection: Int32
        /// The workload item (its index in ``LoadEngine/prepared``).
        var item: Int32
        var measured: Bool
    }

    /// A workload item with its frames ready to send.
    struct Prepared {
        var intentType: [UInt8]
        var phase: RequestPhase
        var body: [UInt8]
    }

    let configuration: LoadConfiguration
    let workload: LoadWorkload
    let sockets: [ZMQSocket]
    /// One per socket: tells when its connection drops and comes back (a broker restart, PROTOCOL.md 7.2).
    let monitors: [ZMQSocketMonitor]
    /// Per socket: the connection dropped and has not come back yet.
    var reconnecting: [Bool]
    let stopFlag: StopFlag
    let prepared: [Prepared]
    let deadlineNanos: UInt64
    /// With idempotency keys: this run's random key prefix; `keyBuffer` holds it, then the request's number.
    let keyPrefixCount: Int
    var keyBuffer: [UInt8] = []
    var inflight: [UInt64: InFlight] = [:]
    var nextID: UInt64 = 1
    var random = SplitMix64(seed: 0x5EED_C0C1_E26E)
    var strayReplies = 0
    /// `unknown-intent` endings before any other ending (see ``noteEnding(isUnknownIntent:)``).
    var unknownIntentEndings = 0
    /// Some request ended otherwise than `unknown-intent`.
    var servedOnce = false
    /// After this many `unknown-intent` endings and no other, the run stops with ``LoadError/Code/unknownIntent``.
    static let unknownIntentLimit = 20
    /// Each workload item's intent type, as an index into the workload's distinct types.
    let typeIndex: [Int]
    let typeCount: Int
    /// With ``LoadConfiguration/throttle``: one throttle per intent type of the workload.
    var throttles: [AdaptiveThrottle] = []
    /// With ``LoadConfiguration/heedsPushback``: the broker's pushback per connection and intent type, at
    /// `connection * typeCount + type` (the broker shares a type's pace among its connections).
    var pushbacks: [Pushback] = []

    init(
        configuration: LoadConfiguration, workload: LoadWorkload, context: ZMQContext, stopFlag: StopFlag
    ) throws(ZMQError) {
        self.configuration = configuration
        self.workload = workload
        self.stopFlag = stopFlag
        var sockets: [ZMQSocket] = []
        var monitors: [ZMQSocketMonitor] = []
        for _ in 0..<configuration.connections {
            let socket = try ZMQSocket(context: context, type: .dealer)
            // The client bounds what it has in flight itself; libzmq's queues must never drop or block.
            try socket.setOption(.sendHighWaterMark, 0)
            try socket.setOption(.receiveHighWaterMark, 0)
            if let curve = configuration.curve { try socket.makeCurveClient(curve) }
            monitors.append(
                try ZMQSocketMonitor(context: context, watching: socket, events: [.disconnected, .handshakeSucceeded])
            )
            try socket.connect(configuration.endpoint)
            sockets.append(socket)
        }
        self.sockets = sockets
        self.monitors = monitors
        reconnecting = [Bool](repeating: false, count: sockets.count)
        prepared = workload.items.map {
            Prepared(intentType: Array($0.intentType.utf8), phase: $0.phase, body: $0.body)
        }
        deadlineNanos = UInt64(configuration.deadlineMilliseconds) * 1_000_000
        var types: [String] = []
        var typeIndex: [Int] = []
        for item in workload.items {
            if let index = types.firstIndex(of: item.intentType) {
                typeIndex.append(index)
            } else {
                typeIndex.append(types.count)
                types.append(item.intentType)
            }
        }
        self.typeIndex = typeIndex
        typeCount = types.count
        if let throttle = configuration.throttle {
            throttles = types.map { _ in AdaptiveThrottle(configuration: throttle) }
        }
        // A closed loop is bounded by its concurrency: a slot the pushback refused would only spin until the next
        // token, so only the open loop heeds it.
        if configuration.heedsPushback, case .open = configuration.mode {
            pushbacks = [Pushback](repeating: Pushback(), count: sockets.count * types.count)
        }
        // "load-<16 hex digits>-": keys of runs never collide; the number after it makes each request's key fresh.
        let prefix = "load-" + String(UInt64.random(in: 0...UInt64.max), radix: 16) + "-"
        keyPrefixCount = prefix.utf8.count
        keyBuffer.reserveCapacity(keyPrefixCount + 20)
        keyBuffer.append(contentsOf: prefix.utf8)
    }

    func close() {
        for socket in sockets { socket.close() }
        for monitor in monitors { monitor.close() }
    }

    // MARK: Connecting

    /// Pings the broker on every connection and waits for every PONG. With several endpoints, a broker that does
    /// not answer within a second is left for the next endpoint (the sockets disconnect and connect there), until
    /// one answers or the connect timeout ends.
    func connect() throws(LoadError) {
        let deadline = MonotonicTime.now() + configuration.connectTimeout.nanoseconds
        let endpoints = configuration.endpoints
        var current = 0
        var moveAt = endpoints.count > 1 ? MonotonicTime.now() + 1_000_000_000 : UInt64.max
        var answered = [Bool](repeating: false, count: sockets.count)
        var buffer = ZMQMultipart(capacity: 8)
        var poller = ZMQPoller()
        for socket in sockets { poller.add(socket) }
        do {
            for var socket in sockets { try ClientMessageEncoder.ping(into: &socket) }
            while answered.contains(false) {
                let now = MonotonicTime.now()
                if now >= moveAt && !answered.contains(true) {
                    let next = (current + 1) % endpoints.count
                    for var socket in sockets {
                        try socket.disconnect(endpoints[current])
                        try socket.connect(endpoints[next])
                        try ClientMessageEncoder.ping(into: &socket)
                    }
                    current = next
                    moveAt = now + 1_000_000_000
                    continue
                }
                guard now < deadline else {
                    throw LoadError(
                        code: .unreachable,
                        message: "the broker at \(endpoints.joined(separator: ",")) did not answer PING within "
                            + "\(configuration.connectTimeout)"
                            + (configuration.curve == nil
                                ? ""
                                : " (with CURVE: is this client's public key on the broker's client allowlist, "
                                    + "and the server key the broker's?)")
                    )
                }
                try poller.poll(timeoutMilliseconds: Int((min(deadline, moveAt) - now) / 1_000_000) + 1)
                for (index, socket) in sockets.enumerated() where poller.isReadable(index) {
                    while try socket.receive(into: &buffer) {
                        let isPong = buffer.withFrames { views, dropped in
                            (try? BrokerReplyDecoder().decode(WireFrames(views, dropped: dropped)))?.kind == .pong
                        }
                        if isPong { answered[index] = true }
                    }
                }
            }
        } catch let error as LoadError {
            throw error
        } catch {
            throw LoadError(code: .socket, message: "\(error)")
        }
    }

    // MARK: The loop

    mutating func run(progress: ((LoadProgress) -> Void)?) throws(LoadError) -> LoadSummary {
        try connect()
        let start = MonotonicTime.now()
        let warmupEnd = start + configuration.warmup.nanoseconds
        let offerEnd = configuration.duration.map { warmupEnd + $0.nanoseconds } ?? .max
        let countLimit = configuration.requestCount ?? .max
        let progressInterval = max(configuration.progressInterval.nanoseconds, 10_000_000)
        var recorder = LoadRecorder(origin: warmupEnd, items: workload.items.count)
        var schedule: LoadSchedule?
        if case .open(let rate) = configuration.mode { schedule = LoadSchedule(start: start, rate: rate) }
        var nextIndex = 0  // open loop: the next scheduled request
        var backlogMax = 0
        var measuredSent = 0
        var lastMeasuredSend: UInt64 = warmupEnd
        var lastMeasuredReply: UInt64 = warmupEnd
        var offering = true
        var drainEnd = UInt64.max
        var nextProgress = start + progressInterval
        var completedAtLastProgress = 0
        var completedAll = 0  // warm-up included, for the progress line
        var poller = ZMQPoller()
        for socket in sockets { poller.add(socket) }
        // The monitors are read on a timer, not polled: every socket in `zmq_poll` costs a `poll` and a `getpid`
        // system call per pass (libzmq checks each socket's command mailbox), and a pass runs for every wake-up.
        var nextMonitorCheck = start
        var buffer = ZMQMultipart(capacity: 8)

        func shouldMeasure(_ intended: UInt64) -> Bool { intended >= warmupEnd }

        do {
            if case .closed(let concurrency) = configuration.mode {
                for index in 0..<concurrency {
                    let now = MonotonicTime.now()
                    let measured = shouldMeasure(now)
                    // Past the warm-up, never more than the request count.
                    if measured && measuredSent >= countLimit { break }
                    measuredSent += try fillSlot(
                        connection: index % sockets.count, now: now, measured: measured,
                        room: countLimit - measuredSent, recorder: &recorder)
                }
            }
            while true {
                var now = MonotonicTime.now()
                if offering, let schedule {
                    // Everything due by now and meant for the window, even after a stall at its very end.
                    let due = schedule.dueCount(at: min(now, offerEnd &- 1))
                    while nextIndex < due && inflight.count < configuration.maxInFlight && measuredSent < countLimit {
                        let intended = schedule.intendedTime(of: nextIndex)
                        guard intended < offerEnd else { break }
                        let measured = shouldMeasure(intended)
                        try offer(
                            connection: (nextIndex / Self.openLoopRun) % sockets.count, intended: intended, now: now,
                            measured: measured,
                            recorder: &recorder)
                        if measured {
                            measuredSent += 1
                            lastMeasuredSend = now
                        }
                        nextIndex += 1
                    }
                    backlogMax = max(backlogMax, due - nextIndex)
                }
                if offering
                    && (now >= offerEnd || measuredSent >= countLimit || stopFlag.value.load(ordering: .relaxed))
                {
                    offering = false
                    drainEnd = now + configuration.drainTimeout.nanoseconds
                }
                if !offering && (inflight.isEmpty || now >= drainEnd) { break }

                // Sleep until a reply comes, the next request is due, or the next tick.
                var wakeAt = min(nextProgress, offering ? offerEnd : drainEnd, nextMonitorCheck)
                if offering, let schedule, inflight.count < configuration.maxInFlight {
                    wakeAt = min(wakeAt, schedule.intendedTime(of: nextIndex))
                }
                now = MonotonicTime.now()
                let timeout = wakeAt > now ? Int((wakeAt - now + 999_999) / 1_000_000) : 0
                try poller.poll(timeoutMilliseconds: timeout)

                if MonotonicTime.now() >= nextMonitorCheck {
                    for index in sockets.indices { try checkMonitor(connection: index) }
                    nextMonitorCheck = MonotonicTime.now() + Self.monitorInterval
                }
                for index in sockets.indices where poller.isReadable(index) {
                    let socket = sockets[index]
                    while try socket.receive(into: &buffer) {
                        let now = MonotonicTime.now()
                        guard let ended = handleReply(&buffer, now: now, recorder: &recorder) else { continue }
                        completedAll += 1
                        if ended.measured { lastMeasuredReply = now }
                        // Closed loop: the next request takes the slot of the one that ended.
                        if offering, schedule == nil, now < offerEnd, !stopFlag.value.load(ordering: .relaxed) {
                            let offered = try fillSlot(
                                connection: Int(ended.connection), now: now, measured: shouldMeasure(now),
                                room: countLimit - measuredSent, recorder: &recorder)
                            if offered > 0 {
                                measuredSent += offered
                                lastMeasuredSend = now
                            }
                        }
                    }
                }

                if unknownIntentEndings >= Self.unknownIntentLimit {
                    let types = Set(workload.items.map(\.intentType)).sorted().joined(separator: ", ")
                    throw LoadError(
                        code: .unknownIntent,
                        message: "the broker answered the first \(unknownIntentEndings) requests unknown-intent: no "
                            + "worker serves \(types); start workers that serve it (e.g. `concierge pool`), or check "
                            + "--intent and --mix")
                }
                now = MonotonicTime.now()
                if now >= nextProgress {
                    let completed = completedAll
                    let seconds = Double(now - nextProgress + progressInterval) / 1e9
                    progress?(
                        LoadProgress(
                            elapsedSeconds: Double(now - start) / 1e9, warmingUp: now < warmupEnd,
                            rate: Double(completed - completedAtLastProgress) / seconds,
                            p99Microseconds: recorder.finalReply.totalCount > 0
                                ? recorder.finalReply.valueAtPercentile(99) : 0,
                            errors: recorder.errorReplies, deadlineMisses: recorder.deadlineMisses,
                            inFlight: inflight.count, sent: measuredSent,
                            progressReplies: recorder.progressReplies
                        )
                    )
                    completedAtLastProgress = completed
                    nextProgress = now + progressInterval
                }
            }
        } catch let error as LoadError {
            throw error
        } catch {
            throw LoadError(code: .socket, message: "\(error)")
        }

        let end = MonotonicTime.now()
        for request in inflight.values where request.measured { recorder.recordUnanswered(1, item: Int(request.item)) }
        recorder.finish(now: end)
        let windowEnd = max(lastMeasuredReply, lastMeasuredSend, warmupEnd + 1)
        let window = Double(windowEnd - warmupEnd) / 1e9
        let offerWindow = Double(max(lastMeasuredSend, warmupEnd + 1) - warmupEnd) / 1e9
        var concurrency: Int?
        var rate: Double?
        switch configuration.mode {
        case .closed(let value): concurrency = value
        case .open(let value): rate = value
        }
        return LoadSummary(
            mode: schedule == nil ? "closed" : "open",
            concurrency: concurrency,
            targetRate: rate,
            connections: configuration.connections,
            durationSeconds: window,
            warmupSeconds: Double(configuration.warmup.nanoseconds) / 1e9,
            deadlineMilliseconds: configuration.deadlineMilliseconds,
            workload: workload.items.map { "\($0.label) (\($0.phase), weight \($0.weight))" },
            requests: recorder.requests,
            throughputRPS: Double(recorder.finalReplies) / window,
            answeredRPS: Double(recorder.finalReplies + recorder.failureReplies + recorder.errorReplies) / window,
            offeredRPS: schedule == nil ? Double(recorder.requests) / window : Double(recorder.requests) / offerWindow,
            finalReplies: recorder.finalReplies,
            errorReplies: recorder.errorReplies,
            progressReplies: recorder.progressReplies,
            unanswered: recorder.unanswered,
            throttled: recorder.throttled,
            failureReplies: recorder.failureReplies,
            deadlineMisses: recorder.deadlineMisses,
            outcomes: recorder.outcomes,
            firstReply: LatencyPercentiles(recorder.firstReply),
            finalReply: LatencyPercentiles(recorder.finalReply),
            clientBacklogMax: backlogMax,
            strayReplies: strayReplies,
            timeline: recorder.timeline,
            firstReplyHistogram: recorder.firstReply,
            finalReplyHistogram: recorder.finalReply,
            idempotencyKeys: configuration.idempotencyKeys,
            labels: zip(workload.items, recorder.items).map { item, record in
                LoadLabelSummary(
                    label: item.label, phase: item.phase.description, weight: item.weight, record: record,
                    runHistogram: recorder.finalReply, window: window)
            }
        )
    }

    // MARK: Requests and replies

    /// Closed loop: fills one in-flight slot. Offers requests until one is sent (a request the throttle refuses
    /// ends at once, and the slot takes the next), or, when measured, until `room` requests were offered. Returns
    /// how many measured requests were offered.
    mutating func fillSlot(
        connection: Int, now: UInt64, measured: Bool, room: Int, recorder: inout LoadRecorder
    ) throws(ZMQError) -> Int {
        var offered = 0
        while !(measured && offered >= room) {
            let sent = try offer(
                connection: connection, intended: now, now: now, measured: measured, recorder: &recorder)
            if measured { offered += 1 }
            if sent { break }
        }
        return offered
    }

    /// Offers one request: sends it, unless its intent type's throttle (``LoadConfiguration/throttle``) refuses it,
    /// which ends it at once (outcome ``LoadOutcome/throttled``). Records a measured request as offered either way.
    /// Returns whether it was sent.
    @discardableResult
    mutating func offer(
        connection: Int, intended: UInt64, now: UInt64, measured: Bool, recorder: inout LoadRecorder
    ) throws(ZMQError) -> Bool {
        let item = prepared.count == 1 ? 0 : workload.pick(random.next())
        if !pushbacks.isEmpty, !pushbacks[connection * typeCount + typeIndex[item]].admit(now: now) {
            if measured { recorder.recordThrottled(now: now, item: item) }
            return false
        }
        if !throttles.isEmpty, !throttles[typeIndex[item]].admit(now: now) {
            if measured { recorder.recordThrottled(now: now, item: item) }
            return false
        }
        try send(item: item, connection: connection, intended: intended, now: now, measured: measured)
        if measured { recorder.recordSent(now: now, item: item) }
        return true
    }

    /// Sends one request: `[CIPC01, REQUEST, id, type, phase, deadline, body]`, or with idempotency keys
    /// `[CIPC02, REQUEST, id, type, phase, deadline, body, key]`.
    mutating func send(item: Int, connection: Int, intended: UInt64, now: UInt64, measured: Bool) throws(ZMQError) {
        let id = nextID
        nextID &+= 1
        var socket = sockets[connection]
        let prepared = prepared[item]
        let keyed = configuration.idempotencyKeys
        if keyed { setKey(id) }
        // HWM 0: libzmq queues without limit (bounded by maxInFlight), so these sends never block. The request id
        // is the request's number, its 8 bytes in host order.
        try ClientMessageEncoder.request(
            into: &socket, version: keyed ? 2 : 1, requestID: WireWord(id), intentType: prepared.intentType,
            phase: prepared.phase, deadlineMilliseconds: configuration.deadlineMilliseconds,
            body: .bytes(prepared.body), idempotencyKey: keyed ? keyBuffer : nil)
        inflight[id] = InFlight(
            intended: intended, sent: now, connection: Int32(connection), item: Int32(item), measured: measured)
    }

    /// Puts request `id`'s key in `keyBuffer`: the run's prefix, then `id` in decimal (no allocation: the buffer
    /// has room for the prefix and 20 digits).
    mutating func setKey(_ id: UInt64) {
        keyBuffer.removeLast(keyBuffer.count - keyPrefixCount)
        var value = id
        repeat {
            keyBuffer.append(UInt8(ascii: "0") + UInt8(value % 10))
            value /= 10
        } while value > 0
        keyBuffer[keyPrefixCount...].reverse()
    }

    /// Open loop: how many consecutive requests go over one connection before the next takes over. Runs keep
    /// libzmq's batching: sent one by one in turn, the requests of a short pass reach each connection's pipe alone,
    /// and each costs its I/O thread a wake-up and its own system calls, here and in the broker.
    static let openLoopRun = 32

    /// How often the monitors are read (a reconnect's sweep starts at most this long after the handshake).
    static let monitorInterval: UInt64 = 50_000_000

    /// Reads connection `connection`'s monitor: when the connection comes back after a disconnect, asks STATUS
    /// about every request in flight on it (the sweep of PROTOCOL.md 7.2). The STATUS queries queue behind any
    /// REQUEST not yet sent, so the broker has seen every request it is asked about unless it lost it.
    mutating func checkMonitor(connection: Int) throws(ZMQError) {
        while let event = try monitors[connection].receive() {
            if event.kind == .disconnected {
                reconnecting[connection] = true
            } else if event.kind == .handshakeSucceeded && reconnecting[connection] {
                reconnecting[connection] = false
                var socket = sockets[connection]
                for (id, request) in inflight where request.connection == connection {
                    try ClientMessageEncoder.status(into: &socket, requestID: WireWord(id))
                }
            }
        }
    }

    /// Handles one message from the broker. Returns the request it ended, if it ended one.
    mutating func handleReply(_ message: inout ZMQMultipart, now: UInt64, recorder: inout LoadRecorder) -> InFlight? {
        message.withFrames { views, dropped in
            handleReply(WireFrames(views, dropped: dropped), now: now, recorder: &recorder)
        }
    }

    /// Handles one message from the broker, decoded by the client's reply decoder (no copy, no allocation): a REPLY
    /// or STATUS answer about one of this run's requests (an 8-byte id), or a PONG. Anything else is counted stray.
    mutating func handleReply(_ frames: WireFrames, now: UInt64, recorder: inout LoadRecorder) -> InFlight? {
        guard let reply = try? BrokerReplyDecoder().decode(frames) else {
            strayReplies += 1
            return nil
        }
        if reply.kind == .pong { return nil }
        guard reply.requestID.count == 8 else {
            strayReplies += 1
            return nil
        }
        let id = reply.requestID.loadUnaligned(as: UInt64.self)
        if reply.kind == .status { return handleSweepAnswer(reply, id: id, now: now, recorder: &recorder) }
        guard var request = inflight[id] else {
            strayReplies += 1
            return nil
        }
        if request.firstReplyAt == 0 {
            request.firstReplyAt = now
            recordFirstAnswer(reply, of: request, now: now)
            if request.measured {
                recorder.recordFirstReply(
                    latency: now - request.intended, missedDeadline: now - request.sent > deadlineNanos
                )
            }
        }
        if reply.status == .progress {
            if request.measured { recorder.recordProgress() }
            inflight[id] = request
            return nil
        }
        inflight[id] = nil
        noteEnding(isUnknownIntent: Self.isUnknownIntent(reply))
        if request.measured {
            let (outcome, isError) = Self.ending(reply)
            recorder.recordFinalReply(
                latency: now - request.intended, outcome: outcome, isError: isError, now: now, item: Int(request.item))
        }
        return request
    }

    /// Tells the request's throttle, if any, what the broker did with it: a first answer that is the error `busy`
    /// is a refusal, any other an accept; and heeds the pushback a `busy` refusal carries.
    private mutating func recordFirstAnswer(_ reply: BrokerReply, of request: InFlight, now: UInt64) {
        guard !throttles.isEmpty || !pushbacks.isEmpty else { return }
        let refused = reply.status == .error && LoadOutcome.error(body: reply.body) == LoadOutcome.busy
        let type = typeIndex[Int(request.item)]
        if !throttles.isEmpty { throttles[type].record(accepted: !refused, now: now) }
        guard refused, !pushbacks.isEmpty, let hint = Pushback.Hint(errorBody: reply.body) else { return }
        pushbacks[Int(request.connection) * typeCount + type].heed(hint, now: now)
    }

    /// Whether a REPLY is the error `unknown-intent` (no worker serves its type).
    private static func isUnknownIntent(_ reply: BrokerReply) -> Bool {
        reply.status == .error && LoadOutcome.error(body: reply.body) == LoadOutcome.unknownIntent
    }

    /// Counts the endings (warm-up included) that are `unknown-intent` while nothing else has ended: a run whose
    /// every answer says no worker serves its intent type measures nothing, so it stops (see
    /// ``unknownIntentLimit``).
    mutating func noteEnding(isUnknownIntent: Bool) {
        if isUnknownIntent {
            if !servedOnce { unknownIntentEndings += 1 }
        } else {
            servedOnce = true
        }
    }

    /// The outcome name of a `final` or `error` REPLY or STATUS answer, and whether it is an error.
    private static func ending(_ reply: BrokerReply) -> (outcome: String, isError: Bool) {
        if reply.status == .error { return (LoadOutcome.error(body: reply.body), true) }
        return (LoadOutcome.final(phase: String(decoding: reply.phase, as: UTF8.self), body: reply.body), false)
    }

    /// The answer to a sweep's STATUS about request `id`. `progress`: the broker has the request, keep waiting.
    /// `final` or `error`: the request's ending (its REPLY was lost while the connection was down), except
    /// `unknown-request`: the broker no longer knows it, ended as `error.broker-restarted`. An answer about a request
    /// already ended (by its REPLY, or by an earlier answer) is ignored.
    mutating func handleSweepAnswer(_ reply: BrokerReply, id: UInt64, now: UInt64, recorder: inout LoadRecorder)
        -> InFlight?
    {
        guard let request = inflight[id], reply.status != .progress else { return nil }
        let (outcome, isError) = Self.ending(reply)
        inflight[id] = nil
        guard request.measured else { return request }
        if outcome == "error.\(WireErrorCode.unknownRequest.rawValue)" {
            recorder.recordBrokerRestarted(now: now, item: Int(request.item))
        } else {
            if request.firstReplyAt == 0 {
                recordFirstAnswer(reply, of: request, now: now)
                recorder.recordFirstReply(
                    latency: now - request.intended, missedDeadline: now - request.sent > deadlineNanos
                )
            }
            recorder.recordFinalReply(
                latency: now - request.intended, outcome: outcome, isError: isError, now: now, item: Int(request.item))
        }
        return request
    }
}

/// Set to end a run early; shared by a runner and its load thread.
final class StopFlag: Sendable {
    let value = Atomic<Bool>(false)
}

/// A small, fast pseudo-random generator (SplitMix64) for picking workload items reproducibly.
struct SplitMix64 {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
