// Fuzz target: the small wire helpers of IntentWire: decimal frames, UTF-8 checks, and the error and progress bodies
// the broker writes without a JSON library.
//
// Input: one mode byte, then the mode's bytes.
//   0: a decimal frame. WireBody.parseDecimal agrees with a reference (1-9 ASCII digits).
//   1: UTF-8. JSONText.isValidUTF8 (ConciergeJSON) agrees with the standard library; WireText.display never traps and is cut.
//   2: an error body: the rest split at its first 0xFF byte into a code and a message (UTF-8, repaired). The body
//      parses as JSON (ConciergeJSON) to exactly {"code": code, "message": message}.
//   3: a progress body: a state, an elapsed time from the next 4 bytes, and a worker name (the rest). It parses to
//      the fields given.

import ConciergeJSON
import IntentWire

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzWireBody(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let mode = data[0] % 4
    let rest = UnsafeRawBufferPointer(start: data + 1, count: size - 1)
    switch mode {
    case 0:
        let digits = rest.allSatisfy { $0 >= 0x30 && $0 <= 0x39 }
        let expected = digits && (1...9).contains(rest.count) ? Int(String(decoding: rest, as: UTF8.self)) : nil
        invariant(WireBody.parseDecimal(rest) == expected, "parseDecimal")
    case 1:
        invariant(JSONText.isValidUTF8(rest) == FuzzInput.isUTF8(rest), "isValidUTF8 disagrees")
        let limit = Int(rest.first ?? 0)
        let shown = WireText.display(rest, limit: limit)
        invariant(rest.count > limit || shown == String(decoding: rest, as: UTF8.self), "display changed short text")
        invariant(shown.utf8.count <= 3 * limit + 3 || rest.count <= limit, "display is not cut")
    case 2:
        let split = rest.firstIndex(of: 0xFF) ?? rest.count
        let code = String(decoding: UnsafeRawBufferPointer(rebasing: rest[..<split]), as: UTF8.self)
        let message = String(
            decoding: UnsafeRawBufferPointer(rebasing: rest[min(split + 1, rest.count)...]), as: UTF8.self)
        let body = WireBody.error(WireErrorCode(code), message)
        invariant(
            (try? JSONValue.parse(body)) == .object(["code": .string(code), "message": .string(message)]),
            "error body \(String(decoding: body, as: UTF8.self))"
        )
    default:
        guard rest.count >= 5 else { return 0 }
        let states = ["queued", "running"]
        let phase = RequestPhase.allCases[Int(rest[0]) % RequestPhase.allCases.count]
        let elapsed = Int(rest[1]) << 24 | Int(rest[2]) << 16 | Int(rest[3]) << 8 | Int(rest[4])
        let worker =
            rest.count > 5 ? String(decoding: UnsafeRawBufferPointer(rebasing: rest[5...]), as: UTF8.self) : nil
        let state = states[Int(rest[0] >> 7)]
        let body = WireBody.progress(state: state, phase: phase, elapsedMilliseconds: elapsed, worker: worker)
        var expected: JSONObject = [
            "state": .string(state), "phase": .string(phase.description), "elapsed_ms": .int(Int64(elapsed)),
        ]
        if let worker { expected["worker"] = .string(worker) }
        invariant((try? JSONValue.parse(body)) == .object(expected), "progress body")
    }
    return 0
}
