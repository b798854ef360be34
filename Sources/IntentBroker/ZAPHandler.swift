import Logging
import Synchronization
import ZeroMQ

/// The broker's ZAP handler (ZeroMQ RFC 27/ZAP): libzmq asks it about every CURVE handshake on the broker's
/// sockets, and it admits a peer only if the peer's public key is on the allowlist of the socket's ZAP domain —
/// ``clientDomain`` on the frontend, ``workerDomain`` on the backend — so a client key cannot register as a
/// worker and a worker key cannot submit requests.
///
/// It binds its REP socket at `inproc://zeromq.zap.01` in the broker's context when it is created (before the
/// broker's sockets bind: without a handler, libzmq 4.3 admits every CURVE peer), answers on a thread of its own
/// after ``start()``, and closes the socket in ``stop()``, which the broker calls after closing the sockets it
/// guards and before terminating the context.
final class ZAPHandler: Sendable {
    /// Where libzmq sends ZAP requests (fixed by RFC 27).
    static let endpoint = "inproc://zeromq.zap.01"
    /// The ZAP domain of the frontend (clients).
    static let clientDomain = "concierge-clients"
    /// The ZAP domain of the backend (workers).
    static let workerDomain = "concierge-workers"

    private let socket: ZMQSocket
    private let allowlists: [String: Set<CurvePublicKey>]
    private let logger: Logger
    private let wake = EventFD()
    private let done = EventFD()
    private let started = Atomic<Bool>(false)
    private let stopRequested = Atomic<Bool>(false)
    private let stopped = Atomic<Bool>(false)
    private let rejectedCount = Atomic<Int>(0)
    private let admittedCount = Atomic<Int>(0)
    /// At most this many refusals are logged per second (a peer hammering the broker must not flood the log);
    /// the rest are counted and summed up in the next warning.
    static let maxWarningsPerSecond = 20

    /// Binds the handler's socket in `context`; answers nothing until ``start()``.
    init(context: ZMQContext, curve: BrokerCurveConfiguration, logger: Logger) throws(ZMQError) {
        socket = try ZMQSocket(context: context, type: .rep)
        do {
            try socket.bind(Self.endpoint)
        } catch {
            socket.close()
            throw error
        }
        allowlists = [Self.clientDomain: curve.clientKeys, Self.workerDomain: curve.workerKeys]
        self.logger = logger
        let both = curve.clientKeys.intersection(curve.workerKeys)
        if !both.isEmpty {
            logger.warning(
                "CURVE keys on both allowlists may connect as clients and as workers",
                metadata: ["keys": "\(both.map(\.z85).sorted())"]
            )
        }
    }

    /// Handshakes refused so far.
    var rejected: Int { rejectedCount.load(ordering: .relaxed) }
    /// Handshakes admitted so far.
    var admitted: Int { admittedCount.load(ordering: .relaxed) }

    /// Starts answering on a thread of its own.
    func start() {
        guard !started.exchange(true, ordering: .acquiringAndReleasing) else { return }
        logger.info(
            "CURVE on: only listed keys may connect",
            metadata: [
                "client-keys": "\(allowlists[Self.clientDomain]?.count ?? 0)",
                "worker-keys": "\(allowlists[Self.workerDomain]?.count ?? 0)",
            ]
        )
        SocketThread.start(name: "concierge-zap") { self.run() }
    }

    /// Stops answering and closes the socket; returns once it is closed (any thread; idempotent).
    func stop() {
        stopRequested.store(true, ordering: .releasing)
        guard started.load(ordering: .acquiring) else {
            if !stopped.exchange(true, ordering: .acquiringAndReleasing) { socket.close() }
            return
        }
        wake.signal()
        var poller = ZMQPoller()
        poller.add(fileDescriptor: done.fileDescriptor)
        while !stopped.load(ordering: .acquiring) { _ = try? poller.poll(timeoutMilliseconds: 100) }
    }

    private func run() {
        var limiter = WarningLimiter()
        var poller = ZMQPoller()
        poller.add(socket)
        let wakeIndex = poller.add(fileDescriptor: wake.fileDescriptor)
        var request = ZMQMultipart(capacity: 8)
        while !stopRequested.load(ordering: .acquiring) {
            do {
                try poller.poll(timeoutMilliseconds: -1)
            } catch {
                logger.error("ZAP handler stops: poll failed", metadata: ["error": "\(error)"])
                break
            }
            if poller.isReadable(wakeIndex) { wake.drain() }
            while !stopRequested.load(ordering: .acquiring), (try? socket.receive(into: &request)) == true {
                answer(request, &limiter)
            }
        }
        socket.close()
        stopped.store(true, ordering: .releasing)
        done.signal()
    }

    /// Answers one request: [version, request id, domain, address, identity, mechanism, credentials...] with
    /// [version, request id, status code, status text, user id, metadata].
    private func answer(_ request: borrowing ZMQMultipart, _ limiter: inout WarningLimiter) {
        let requestID = request.count >= 2 ? request.bytes(1) : []
        guard request.count >= 6, request.overflow == 0, request.equals(0, "1.0") else {
            logger.error("malformed ZAP request", metadata: ["frames": "\(request.count)"])
            reply(requestID, "500", "malformed ZAP request", userID: "")
            return
        }
        let domain = request.string(2)
        let address = request.string(3)
        guard request.equals(5, "CURVE"), request.count == 7, let key = try? CurvePublicKey(bytes: request.bytes(6))
        else {
            reject(requestID, domain: domain, key: "-", address: address, "only CURVE is accepted", &limiter)
            return
        }
        guard let allowlist = allowlists[domain] else {
            reject(requestID, domain: domain, key: key.z85, address: address, "unknown ZAP domain", &limiter)
            return
        }
        guard allowlist.contains(key) else {
            let role = domain == Self.clientDomain ? "client" : "worker"
            let reason = "key not on the \(role) allowlist"
            reject(requestID, domain: domain, key: key.z85, address: address, reason, &limiter)
            return
        }
        admittedCount.add(1, ordering: .relaxed)
        logger.debug("CURVE handshake admitted", metadata: ["domain": "\(domain)", "key": "\(key.z85)"])
        reply(requestID, "200", "OK", userID: key.z85)
    }

    private func reject(
        _ requestID: [UInt8],
        domain: String,
        key: String,
        address: String,
        _ reason: String,
        _ limiter: inout WarningLimiter
    ) {
        rejectedCount.add(1, ordering: .relaxed)
        if let suppressed = limiter.allow(now: ContinuousClock.now) {
            var metadata: Logger.Metadata = [
                "domain": "\(domain)", "key": "\(key)", "address": "\(address)", "reason": "\(reason)",
            ]
            if suppressed > 0 { metadata["not-logged-before"] = "\(suppressed)" }
            logger.warning("CURVE handshake rejected", metadata: metadata)
        }
        reply(requestID, "400", reason, userID: "")
    }

    /// Lets ``ZAPHandler/maxWarningsPerSecond`` warnings through per second and counts the others.
    struct WarningLimiter {
        private var windowStart = ContinuousClock.now
        private var logged = 0
        private var suppressed = 0

        /// nil: do not log this one; else log it, noting how many were not logged since the last one.
        mutating func allow(now: ContinuousClock.Instant) -> Int? {
            if now - windowStart >= .seconds(1) {
                windowStart = now
                logged = 0
            }
            guard logged < ZAPHandler.maxWarningsPerSecond else {
                suppressed += 1
                return nil
            }
            logged += 1
            defer { suppressed = 0 }
            return suppressed
        }
    }

    private func reply(_ requestID: [UInt8], _ status: String, _ text: String, userID: String) {
        let frames = [Array("1.0".utf8), requestID, Array(status.utf8), Array(text.utf8), Array(userID.utf8), []]
        do {
            try socket.send(multipart: frames, dontWait: false)
        } catch {
            logger.error("cannot answer a ZAP request", metadata: ["error": "\(error)"])
        }
    }
}
