import Synchronization
import Testing
import ZeroMQ

#if canImport(Glibc)
    import Glibc
#endif

/// Who keeps what alive in the binding, and that ending a context never hangs: sockets hold their context, the
/// context's deinit runs after its last socket and never waits for an open one, `terminate()` is thread-safe
/// and idempotent, and failed libzmq calls surface as errors.
///
/// Every wait is bounded: code that could hang runs on a thread of its own (see ``finishes(within:_:)``), so a
/// regression fails the test instead of hanging the runner.
@Suite struct OwnershipTests {
    @Test func aSocketKeepsItsContextAliveAndTheContextEndsAfterItsLastSocket() throws {
        let weakContext = Box(Weak<ZMQContext>())
        let ended = try finishes(within: .seconds(10)) {
            do {
                var sockets: [ZMQSocket] = []
                do {
                    let context = ZMQContext()
                    weakContext.value.object = context
                    sockets.append(try ZMQSocket(context: context, type: .pair))
                    sockets.append(try ZMQSocket(context: context, type: .pair))
                }
                // The last reference to the context is gone; its sockets still work.
                #expect(weakContext.value.object != nil)
                try sockets[0].bind("inproc://ownership-pair")
                try sockets[1].connect("inproc://ownership-pair")
                try sockets[0].send("hello", dontWait: false)
                #expect(try sockets[1].receiveMultipart() == [Array("hello".utf8)])
                // The first socket closes, the context stays; the second goes, and the context with it.
                sockets[0].close()
                sockets.removeFirst()
                #expect(weakContext.value.object != nil)
                sockets.removeAll()
            } catch {
                Issue.record(error)
            }
        }
        #expect(ended, "ending the context waited for its open sockets")
        #expect(weakContext.value.object == nil)
    }

    @Test func droppingAContextWhoseSocketsAreStillOpenNeverBlocks() throws {
        // The order that hung before sockets held their context: the context's last reference goes first, while
        // its socket is open (and connected, with a message queued).
        let kept = Box<ZMQSocket?>(nil)
        let returned = try finishes(within: .seconds(10)) {
            do {
                var context: ZMQContext? = ZMQContext()
                let socket = try ZMQSocket(context: context!, type: .dealer)
                try socket.connect("tcp://127.0.0.1:9")
                try socket.send("queued", dontWait: true)
                context = nil
                kept.value = socket
            } catch {
                Issue.record(error)
            }
        }
        #expect(returned, "dropping the context blocked in zmq_ctx_term")
        // Closing the socket now ends the context too, at once (linger 0).
        let closed = try finishes(within: .seconds(10)) { kept.value = nil }
        #expect(closed)
    }

    @Test func terminateIsThreadSafeAndIdempotent() throws {
        for round in 0..<200 {
            let context = ZMQContext()
            if round.isMultiple(of: 2) {
                // With a socket: terminate() waits for it, shutdown() from other threads must stay harmless.
                let socket = try ZMQSocket(context: context, type: .pull)
                socket.close()
            }
            let threads = 8
            let ready = Counter()
            let ended = try finishes(within: .seconds(20), threads: threads) { index in
                ready.increment()
                while ready.value < threads { sched_yield() }  // start together, to race for the flag
                if index.isMultiple(of: 4) { context.shutdown() } else { context.terminate() }
            }
            try #require(ended, "concurrent terminate() did not return (round \(round))")
            context.terminate()
            context.shutdown()
            #expect(throws: ZMQError.terminated) { _ = try ZMQSocket(context: context, type: .pair) }
        }
    }

    @Test func aShutDownContextRefusesNewSockets() throws {
        let context = ZMQContext()
        context.shutdown()
        #expect(throws: ZMQError.terminated) { _ = try ZMQSocket(context: context, type: .pair) }
        context.terminate()
    }

    @Test func aMessageThatCannotBeAllocatedThrowsInsteadOfWritingThroughANullFrame() throws {
        // zmq_msg_init_size fails with ENOMEM for a size no allocator can serve.
        #expect(throws: ZMQError(code: ENOMEM)) {
            _ = try ZMQMessage.copying(repeatElement(UInt8(0), count: Int.max))
        }
        let message = try ZMQMessage.copying(string: "fits")
        #expect(message.string == "fits")
    }

    @Test func aPollerKeepsItsSocketsAlive() throws {
        let context = ZMQContext()
        weak var weakSocket: ZMQSocket?
        var poller = ZMQPoller()
        do {
            let socket = try ZMQSocket(context: context, type: .pull)
            weakSocket = socket
            poller.add(socket)
        }
        #expect(weakSocket != nil)
        #expect(try poller.poll(timeoutMilliseconds: 0) == 0)
    }
}

/// A value threads share.
final class Box<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>
    init(_ value: Value) { mutex = Mutex(value) }
    var value: Value {
        get { mutex.withLock { $0 } }
        set { mutex.withLock { $0 = newValue } }
    }
}

/// A weak reference (to watch an object go away).
struct Weak<Object: AnyObject & Sendable>: Sendable {
    weak var object: Object?
}

/// A counter threads share.
final class Counter: Sendable {
    private let count = Atomic(0)
    var value: Int { count.load(ordering: .acquiring) }
    func increment() { count.add(1, ordering: .acquiringAndReleasing) }
}

/// Runs `body(0..<threads)` on `threads` threads of their own and waits at most `limit` for all of them; false if
/// they did not finish in time (a stuck thread is then left behind rather than hanging the test runner).
func finishes(
    within limit: Duration,
    threads: Int = 1,
    _ body: @escaping @Sendable (Int) -> Void
) throws -> Bool {
    let done = EventFD()
    let finished = Counter()
    for index in 0..<threads {
        SocketThread.start(name: "test-bounded") {
            body(index)
            finished.increment()
            done.signal()
        }
    }
    let clock = ContinuousClock()
    let end = clock.now + limit
    var poller = ZMQPoller()
    poller.add(fileDescriptor: done.fileDescriptor)
    while finished.value < threads {
        let left = clock.now.duration(to: end)
        guard left > .zero else { return false }
        try poller.poll(timeoutMilliseconds: Int(left.components.seconds) * 1000 + 10)
        done.drain()
    }
    return true
}

/// ``finishes(within:threads:_:)`` for one thread.
func finishes(within limit: Duration, _ body: @escaping @Sendable () -> Void) throws -> Bool {
    try finishes(within: limit, threads: 1) { _ in body() }
}
