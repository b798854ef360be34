// zmq-roundtrip: the raw libzmq baseline for the benchmark suite (no broker, no JSON): a ROUTER echo server and a
// DEALER client with a window of requests in flight, over the project's own ZeroMQ binding.
//
//   zmq-roundtrip server ENDPOINT
//   zmq-roundtrip cip-sink ENDPOINT BYTES   (answers every CIP REQUEST at once with a final REPLY of BYTES bytes:
//                                            measures what the load client alone can drive, with no broker)
//   zmq-roundtrip client ENDPOINT SECONDS WINDOW BYTES LABEL
//
// The client prints one line: `RESULT label=... rps=... p50_us=... p99_us=...`. Loopback only; the client stops by
// itself after SECONDS (plus one second of warm-up); stop the server by its pid.
import IntentWire
import ZeroMQ

#if canImport(Glibc)
    import Glibc
#endif

func server(_ endpoint: String) throws {
    let context = ZMQContext()
    let socket = try ZMQSocket(context: context, type: .router)
    try socket.setOption(.sendHighWaterMark, 0)
    try socket.setOption(.receiveHighWaterMark, 0)
    try socket.bind(endpoint)
    var buffer = ZMQMultipart(capacity: 8)
    while true {
        guard try socket.receive(into: &buffer, dontWait: false) else { continue }
        for index in 0..<buffer.count {
            let frame = buffer.take(index)
            try socket.send(frame, more: index < buffer.count - 1, dontWait: false)
        }
    }
}

func cipSink(_ endpoint: String, replyBytes: Int) throws {
    let context = ZMQContext()
    let socket = try ZMQSocket(context: context, type: .router)
    try socket.setOption(.sendHighWaterMark, 0)
    try socket.setOption(.receiveHighWaterMark, 0)
    try socket.bind(endpoint)
    let prefix = Array(#"{"handle":{"code":"success"},"text":""#.utf8)
    let body =
        prefix + [UInt8](repeating: UInt8(ascii: "x"), count: max(0, replyBytes - prefix.count - 2))
        + Array(#""}"#.utf8)
    var buffer = ZMQMultipart(capacity: 8)
    while true {
        guard try socket.receive(into: &buffer, dontWait: false) else { continue }
        // [client, CIPC01, REQUEST, id, type, phase, deadline, body] -> [client, CIPC01, REPLY, id, final, phase, body]
        if buffer.count == 8 && buffer.equals(2, CIP.Client.request) {
            try socket.send(buffer.take(0), more: true, dontWait: false)
            try socket.send(CIP.clientSignature, more: true, dontWait: false)
            try socket.send(CIP.Broker.reply, more: true, dontWait: false)
            try socket.send(buffer.take(3), more: true, dontWait: false)
            try socket.send(CIP.Status.final, more: true, dontWait: false)
            try socket.send(buffer.take(5), more: true, dontWait: false)
            try socket.send(body, dontWait: false)
        } else if buffer.count == 3 && buffer.equals(2, CIP.Client.ping) {
            try socket.send(buffer.take(0), more: true, dontWait: false)
            try socket.send(CIP.clientSignature, more: true, dontWait: false)
            try socket.send(CIP.Broker.pong, dontWait: false)
        }
    }
}

func client(_ endpoint: String, seconds: Double, window: Int, bytes: Int, label: String) throws {
    let context = ZMQContext()
    let socket = try ZMQSocket(context: context, type: .dealer)
    try socket.setOption(.sendHighWaterMark, 0)
    try socket.setOption(.receiveHighWaterMark, 0)
    try socket.connect(endpoint)
    var payload = [UInt8](repeating: UInt8(ascii: "x"), count: max(bytes, 8))
    let start = MonotonicTime.now()
    let measureFrom = start + 1_000_000_000
    let end = measureFrom + UInt64(seconds * 1e9)
    var latencies: [UInt64] = []
    latencies.reserveCapacity(1 << 20)
    var count = 0
    func send() throws {
        var now = MonotonicTime.now()
        withUnsafeBytes(of: &now) { stamp in
            for index in 0..<8 { payload[index] = stamp[index] }
        }
        try socket.send(payload, dontWait: false)
    }
    for _ in 0..<window { try send() }
    var buffer = ZMQMultipart(capacity: 4)
    while true {
        guard try socket.receive(into: &buffer, dontWait: false) else { continue }
        let now = MonotonicTime.now()
        let sent = buffer.withBytes(0) { $0.loadUnaligned(as: UInt64.self) }
        if now >= measureFrom && now < end {
            count += 1
            latencies.append(now - sent)
        }
        if now >= end { break }
        try send()
    }
    latencies.sort()
    func percentile(_ p: Double) -> Double {
        latencies.isEmpty ? 0 : Double(latencies[min(latencies.count - 1, Int(Double(latencies.count) * p))]) / 1000
    }
    print(
        "RESULT label=\(label) rps=\(Int(Double(count) / seconds)) p50_us=\(percentile(0.5)) "
            + "p99_us=\(percentile(0.99)) window=\(window) bytes=\(bytes)"
    )
    socket.close()
}

let arguments = CommandLine.arguments
if arguments.count == 3 && arguments[1] == "server" {
    try server(arguments[2])
} else if arguments.count == 4 && arguments[1] == "cip-sink", let bytes = Int(arguments[3]) {
    try cipSink(arguments[2], replyBytes: bytes)
} else if arguments.count == 7 && arguments[1] == "client", let seconds = Double(arguments[3]),
    let window = Int(arguments[4]), let bytes = Int(arguments[5])
{
    try client(arguments[2], seconds: seconds, window: window, bytes: bytes, label: arguments[6])
} else {
    print("usage: zmq-roundtrip server ENDPOINT | cip-sink ENDPOINT BYTES | client ENDPOINT SECONDS WINDOW BYTES LABEL")
    exit(2)
}
