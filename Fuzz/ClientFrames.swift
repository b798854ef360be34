// Fuzz target: the broker's decoder of client messages (IntentWire.ClientMessageDecoder, PROTOCOL.md 4.8).
//
// Input: FuzzInput.message. Options: bit 0 small limits (max body 64, hard limit 1000 ms, max frames 8), bits 1-2
// frames the receiver "dropped" (0-3).
//
// Invariants: decoding never traps; a decoded command (CIPC01; CIPC02 with its idempotency key and CANCEL; CIPC03 with
// TURN, CONVERSATION and END; CIPC04 with the trace context of REQUEST and TURN) agrees
// with its frames and decodes again the same after being written out anew, by hand and by the codec's encoder; an error names a check of 4.8, a code that check may give, echoes only what 4.8 allows, and has a
// short message and an error body that is valid JSON with the same code and message.

import ConciergeJSON
import IntentWire

let smallLimits = WireLimits(maxFrames: 8, maxBodySize: 64, hardLimitMilliseconds: 1000)

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzClientFrames(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let (options, frames) = FuzzInput.message(UnsafeRawBufferPointer(start: data, count: size))
    let limits = options & 1 == 1 ? smallLimits : WireLimits()
    let decoder = ClientMessageDecoder(limits: limits)
    let dropped = Int(options >> 1 & 3)
    let outcome = WireFrames.withFrames(frames, dropped: dropped) { wire in
        Result { () throws(ClientMessageError) in try decoder.decode(wire) }
    }
    switch outcome {
    case .success(let command):
        checkDecoded(command, frames: frames, dropped: dropped, limits: limits, decoder: decoder)
    case .failure(let error):
        checkError(error, frames: frames, dropped: dropped, limits: limits)
    }
    return 0
}

func checkDecoded(
    _ command: ClientCommand, frames: [[UInt8]], dropped: Int, limits: WireLimits, decoder: ClientMessageDecoder
) {
    invariant(dropped == 0 && frames.count >= 2 && frames.count <= limits.maxFrames, "frame count \(frames.count)")
    let v4 = frames[0] == FuzzInput.ascii("CIPC04")
    let v3 = frames[0] == FuzzInput.ascii("CIPC03") || v4
    let v2 = frames[0] == FuzzInput.ascii("CIPC02") || v3
    invariant(frames[0] == FuzzInput.ascii("CIPC01") || v2, "signature")
    switch command {
    case .request(let request):
        invariant(
            frames.count == (v4 ? 10 : v2 ? 8 : 7) && frames[1] == FuzzInput.ascii("REQUEST"), "REQUEST frames")
        invariant(request.version == (v4 ? 4 : v3 ? 3 : v2 ? 2 : 1), "version")
        checkTraceContext(request.traceContext, frames: frames, at: v4 ? 8 : nil)
        // Version 02: F7 is the idempotency key, at most 255 bytes; empty is none.
        if v2 {
            invariant(frames[7].count <= 255, "key longer than 255 bytes")
            invariant(request.idempotencyKey == (frames[7].isEmpty ? nil : frames[7]), "idempotency key")
        } else {
            invariant(request.idempotencyKey == nil, "a key in version 01")
        }
        invariant(request.requestID == frames[2] && (1...255).contains(request.requestID.count), "request id")
        // F3 is the type, or `Type@N` naming a definition version (section 5.18).
        invariant(request.intentTypeFrame == frames[3] && (1...255).contains(request.intentType.count), "intent type")
        invariant(FuzzInput.isUTF8(request.intentType), "intent type is not UTF-8")
        invariant(FuzzInput.ascii(request.phase.description) == frames[4], "phase")
        if let deadline = request.deadlineMilliseconds {
            invariant((10...limits.maxDeadlineMilliseconds).contains(deadline), "deadline \(deadline)")
            invariant(Int(String(decoding: frames[5], as: UTF8.self)) == deadline, "deadline text")
        } else {
            invariant(frames[5].isEmpty, "default deadline with a deadline frame")
        }
        invariant(request.bodySize == frames[6].count && (1...limits.maxBodySize).contains(request.bodySize), "body")
        // Written out anew (canonical deadline, no leading zeros), it decodes the same.
        let again: [[UInt8]] =
            [
                frames[0], FuzzInput.ascii("REQUEST"), request.requestID, request.intentTypeFrame,
                FuzzInput.ascii(request.phase.description),
                request.deadlineMilliseconds.map { FuzzInput.ascii(String($0)) } ?? [], frames[6],
            ] + (v2 ? [request.idempotencyKey ?? []] : []) + (v4 ? [frames[8], frames[9]] : [])
        invariant((try? decoder.decode(again)) == command, "REQUEST does not decode again the same")
        // The codec's encoder writes exactly those frames.
        var encoded = WireFrameList()
        ClientMessageEncoder.request(into: &encoded, request, body: .body(frames[6]))
        invariant(encoded.frames == again, "the encoder does not write the REQUEST's frames")
    case .status(let id):
        invariant(frames.count == 3 && frames[1] == FuzzInput.ascii("STATUS") && id == frames[2], "STATUS")
        invariant((1...255).contains(id.count), "STATUS id")
    case .ping:
        invariant(frames[1] == FuzzInput.ascii("PING"), "PING")
    case .cancel(let id):
        // Version 02 on: exactly [CIPC0v, CANCEL, request id].
        invariant(v2 && frames.count == 3 && frames[1] == FuzzInput.ascii("CANCEL") && id == frames[2], "CANCEL")
        invariant((1...255).contains(id.count), "CANCEL id")
    case .turn(let turn):
        // Version 03: [CIPC03, TURN, request id, conversation id, turn, deadline, body, flags].
        invariant(v3 && frames.count == (v4 ? 10 : 8) && frames[1] == FuzzInput.ascii("TURN"), "TURN frames")
        invariant(turn.version == (v4 ? 4 : 3), "TURN version")
        checkTraceContext(turn.traceContext, frames: frames, at: v4 ? 8 : nil)
        invariant(turn.requestID == frames[2] && (1...255).contains(turn.requestID.count), "TURN request id")
        invariant(
            turn.conversationID == frames[3] && (1...255).contains(turn.conversationID.count)
                && turn.conversationID.allSatisfy { (0x21...0x7E).contains($0) }, "conversation id")
        invariant(turn.turn >= 1 && Int(String(decoding: frames[4], as: UTF8.self)) == turn.turn, "turn")
        invariant(turn.bodySize == frames[6].count && (1...limits.maxBodySize).contains(turn.bodySize), "TURN body")
        invariant(ClientTurn.Flags(frame: frames[7]) == turn.flags, "flags")
    case .readConversation(let id), .endConversation(let id):
        invariant(v3 && frames.count == 3 && id == frames[2], "CONVERSATION or END")
        invariant(ClientTurn.isConversationID(id), "conversation id")
    }
    // Every decoded command, encoded by the codec, decodes again the same.
    var encoded = WireFrameList()
    ClientMessageEncoder.command(
        into: &encoded, command, version: v4 ? 4 : v3 ? 3 : v2 ? 2 : 1, body: .body(frames.count > 6 ? frames[6] : [0]))
    invariant((try? decoder.decode(encoded.frames)) == command, "an encoded command does not decode the same")
}

/// The trace context of a CIPC04 REQUEST or TURN (F8, F9; `index` nil before version 04): nil when both frames are
/// empty, else their bytes, a W3C traceparent (55 bytes in version 00, lowercase hex, ids not all zero) and a
/// tracestate of at most 512 printable ASCII bytes.
func checkTraceContext(_ trace: TraceContext?, frames: [[UInt8]], at index: Int?) {
    guard let index else { return invariant(trace == nil, "a trace context before version 04") }
    guard let trace else {
        return invariant(frames[index].isEmpty && frames[index + 1].isEmpty, "trace context frames dropped")
    }
    invariant(trace.traceparentBytes == frames[index] && trace.tracestateBytes == frames[index + 1], "trace frames")
    let parent = frames[index]
    invariant(parent.count >= 55 && parent.count <= 512 && trace.version != "ff", "traceparent size or version")
    invariant(parent[0] != UInt8(ascii: "0") || parent[1] != UInt8(ascii: "0") || parent.count == 55, "version 00")
    invariant(trace.traceID.count == 32 && trace.traceID != String(repeating: "0", count: 32), "trace id")
    invariant(trace.parentSpanID.count == 16 && trace.parentSpanID != String(repeating: "0", count: 16), "parent id")
    invariant(frames[index + 1].count <= 512 && frames[index + 1].allSatisfy { (0x20...0x7E).contains($0) }, "state")
}

func checkError(_ error: ClientMessageError, frames: [[UInt8]], dropped: Int, limits: WireLimits) {
    // A TURN goes through a REQUEST's checks for its own frames: 6 is its turn number, 7 its conversation id.
    let v4 = frames.count >= 2 && frames[0] == FuzzInput.ascii("CIPC04")
    let isTurn =
        frames.count >= 2 && (frames[0] == FuzzInput.ascii("CIPC03") || v4) && frames[1] == FuzzInput.ascii("TURN")
        && error.check >= 4
    let allowed: [Int: WireErrorCode] = [
        1: .malformed, 2: .unsupportedVersion, 3: .unknownCommand, 4: .malformed, 5: .badRequestID,
        6: isTurn ? .malformed : .badPhase, 7: .malformed, 8: .badDeadline, 9: .malformed, 10: .tooLarge,
    ]
    // Check 4b (CIPC04): the trace context of a REQUEST or TURN of the right frame count.
    let traceCheck =
        v4 && error.check == 4 && error.code == .badTraceContext
        && (frames[1] == FuzzInput.ascii("REQUEST") || frames[1] == FuzzInput.ascii("TURN")) && frames.count == 10
    invariant(allowed[error.check] == error.code || traceCheck, "check \(error.check) gave \(error.code)")
    // Echo F2: only the message's own F2 of at most 255 bytes; never for checks 2 and 5.
    if !error.requestID.isEmpty {
        invariant(frames.count >= 3 && error.requestID == frames[2], "echoed something other than F2")
        invariant(error.check != 2 && error.check != 5, "echoed F2 on check \(error.check)")
    } else if frames.count >= 3 && (1...255).contains(frames[2].count) {
        invariant(error.check == 2, "F2 not echoed on check \(error.check)")
    }
    invariant(error.requestID.count <= 255, "echoed F2 too long")
    // F4: the phase once checked (checks 7-10), else empty; the phase is the message's own.
    if error.check >= 7 && !isTurn {
        invariant(error.phase.map { FuzzInput.ascii($0.description) == frames[4] } == true, "F4 not the phase")
    } else {
        invariant(error.phase == nil, "F4 set on check \(error.check)")
    }
    // A malformed STATUS, or a malformed CANCEL of version 02 on, is answered as a STATUS answer; a malformed
    // CONVERSATION or END as a CONVERSATION answer.
    let versionAtLeast2 =
        frames.count >= 2
        && [FuzzInput.ascii("CIPC02"), FuzzInput.ascii("CIPC03"), FuzzInput.ascii("CIPC04")].contains(frames[0])
    let answeredAsStatus =
        frames.count >= 2
        && (frames[1] == FuzzInput.ascii("STATUS") || (versionAtLeast2 && frames[1] == FuzzInput.ascii("CANCEL")))
    let answeredAsConversation =
        frames.count >= 2 && (frames[0] == FuzzInput.ascii("CIPC03") || v4)
        && (frames[1] == FuzzInput.ascii("CONVERSATION") || frames[1] == FuzzInput.ascii("END"))
    invariant((error.answer == .status) == (error.check == 4 && answeredAsStatus), "answer")
    invariant((error.answer == .conversation) == (error.check == 4 && answeredAsConversation), "conversation answer")
    if error.check == 1 {
        let count = frames.count + dropped
        invariant(count < 2 || count > limits.maxFrames || dropped > 0, "check 1 on \(count) frames")
    }
    invariant(!error.message.isEmpty && error.message.utf8.count <= 300, "message of \(error.message.utf8.count) bytes")
    // The error body is the standard error object.
    let body = try? JSONValue.parse(error.body)
    invariant(
        body == .object(["code": .string(error.code.rawValue), "message": .string(error.message)]),
        "error body \(String(decoding: error.body, as: UTF8.self))"
    )
}
