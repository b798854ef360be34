// Fuzz target: the broker's decoder of worker messages (IntentWire.WorkerMessageDecoder, PROTOCOL.md 5.12).
//
// Input: FuzzInput.message. Options: bit 0 the sender is registered, bit 1 small limits (max frames 8), bits 2-3
// frames the receiver "dropped" (0-3).
//
// Invariants: decoding never traps; a decoded command agrees with its frames (READY written out anew decodes the
// same); an unregistered sender gets `.unregistered` for anything but READY; an error names a check of 5.12 and a
// code that check may give, checks 5 and 6 only for registered senders, with a short message. The STATS query check
// (5.14, before decoding) says yes only for exactly [CIPW0v, STATS] of a version from 02 to 06, and refuses
// only a longer STATS, as check 3s. A CIPW04 READY pairs each intent type with its definition (5.16).

import ConciergeJSON
import IntentWire

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzWorkerFrames(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let (options, frames) = FuzzInput.message(UnsafeRawBufferPointer(start: data, count: size))
    let registered = options & 1 == 1
    let limits = options & 2 == 2 ? WireLimits(maxFrames: 8) : WireLimits()
    let dropped = Int(options >> 2 & 3)
    let decoder = WorkerMessageDecoder(limits: limits)
    let outcome = WireFrames.withFrames(frames, dropped: dropped) { wire in
        Result { () throws(WorkerMessageError) in try decoder.decode(wire, isRegistered: registered) }
    }
    let isStats =
        frames.count >= 2
        && ["CIPW02", "CIPW03", "CIPW04", "CIPW05", "CIPW06"].map(FuzzInput.ascii).contains(frames[0])
        && frames[1] == FuzzInput.ascii("STATS")
    let query = WireFrames.withFrames(frames, dropped: dropped) { wire in
        Result { () throws(WorkerMessageError) in try decoder.isStatsQuery(wire) }
    }
    switch query {
    case .success(let yes):
        invariant(yes == (isStats && frames.count == 2 && dropped == 0), "STATS query")
    case .failure(let error):
        invariant(isStats && (frames.count != 2 || dropped > 0), "STATS refused")
        invariant(error.code == .malformed && error.check == 3 && error.command == .stats, "STATS error")
    }
    switch outcome {
    case .success(let command):
        invariant(dropped == 0 && frames.count >= 2 && frames.count <= limits.maxFrames, "frame count")
        let version: UInt8 =
            frames[0] == FuzzInput.ascii("CIPW06")
            ? 6
            : frames[0] == FuzzInput.ascii("CIPW05")
                ? 5
                : frames[0] == FuzzInput.ascii("CIPW04")
                    ? 4 : frames[0] == FuzzInput.ascii("CIPW03") ? 3 : frames[0] == FuzzInput.ascii("CIPW02") ? 2 : 1
        invariant(frames[0] == FuzzInput.ascii("CIPW01") || version >= 2, "signature")
        let isReady = frames[1] == FuzzInput.ascii("READY")
        switch command {
        case .ready(let ready):
            invariant(isReady && frames.count >= 5, "READY frames")
            invariant((1...1000).contains(ready.capacity), "capacity \(ready.capacity)")
            invariant(ready.version == version, "READY's version is its signature's")
            invariant(Int(String(decoding: frames[2], as: UTF8.self)) == ready.capacity, "capacity text")
            invariant(ready.name == frames[3] && (1...255).contains(ready.name.count) && ready.name[0] != 0, "name")
            invariant(FuzzInput.isUTF8(ready.name), "name is not UTF-8")
            invariant(Set(ready.intentTypes).count == ready.intentTypes.count, "repeated intent types")
            if version >= 4 {
                // Each type, then its definition: a JSON object defining that type.
                invariant(frames.count % 2 == 0, "a CIPW04 READY of type and definition pairs")
                invariant(
                    Set(ready.intentTypes) == Set(stride(from: 4, to: frames.count, by: 2).map { frames[$0] }),
                    "intent types")
                invariant(ready.definitions.count == ready.intentTypes.count, "a definition per type")
                for (type, definition) in zip(ready.intentTypes, ready.definitions) {
                    invariant(
                        definition.json["intent"]?.stringValue == String(decoding: type, as: UTF8.self),
                        "definition's type")
                    invariant(definition.digest.hasPrefix("sha256:") && definition.digest.utf8.count == 71, "digest")
                }
            } else {
                invariant(Set(ready.intentTypes) == Set(frames[4...]), "intent types")
                invariant(ready.definitions.isEmpty, "definitions before version 04")
            }
            for type in ready.intentTypes {
                invariant((1...255).contains(type.count) && FuzzInput.isUTF8(type), "intent type")
            }
            let again =
                [
                    frames[0], FuzzInput.ascii("READY"), FuzzInput.ascii(String(ready.capacity)),
                    ready.name,
                ]
                + (version >= 4
                    ? zip(ready.intentTypes, ready.definitions).flatMap { [$0, $1.json.serialized()] }
                    : ready.intentTypes)
            invariant((try? decoder.decode(again, isRegistered: !registered)) == command, "READY decodes differently")
        case .unregistered(let name):
            invariant(!registered && !isReady, "unregistered")
            invariant(
                (name == nil) == !["RESULT", "HEARTBEAT", "DRAIN", "DISCONNECT"].map(FuzzInput.ascii).contains(
                    frames[1]), "name")
        case .result(let result):
            invariant(registered && frames.count == 5 && frames[1] == FuzzInput.ascii("RESULT"), "RESULT frames")
            invariant(frames[2].count == 8, "job id")
            invariant(result.jobID == frames[2].withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }, "job id value")
            invariant(result.bodySize == frames[4].count && result.bodySize > 0, "body")
            let outcome: WorkerResult.Outcome =
                switch String(decoding: frames[3], as: UTF8.self) {
                case "continue": .continue
                case "error": .error
                case "cancelled": .cancelled
                default: .stop
                }
            invariant(result.outcome == outcome, "outcome")
        case .heartbeat:
            invariant(registered && frames[1] == FuzzInput.ascii("HEARTBEAT"), "HEARTBEAT")
        case .drain:
            invariant(registered && frames[1] == FuzzInput.ascii("DRAIN"), "DRAIN")
        case .disconnect:
            invariant(registered && frames[1] == FuzzInput.ascii("DISCONNECT"), "DISCONNECT")
        }
    case .failure(let error):
        let allowed: [Int: WireErrorCode] = [
            1: .malformed, 2: .unsupportedVersion, 3: .malformed, 5: .unknownCommand, 6: .malformed,
        ]
        invariant(allowed[error.check] == error.code, "check \(error.check) gave \(error.code)")
        invariant(error.isFromRegisteredWorker == (error.check > 4), "isFromRegisteredWorker")
        if error.check > 4 { invariant(registered, "check \(error.check) for an unregistered sender") }
        if error.check == 3 { invariant(error.command == .ready, "check 3 is READY's") }
        if error.check == 6 { invariant(error.command == .result, "check 6 is RESULT's") }
        invariant(!error.message.isEmpty && error.message.utf8.count <= 300, "message")
    }
    return 0
}
