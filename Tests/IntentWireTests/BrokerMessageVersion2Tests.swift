import IntentWire
import Testing

/// Version 02 of the worker protocol as a worker decodes it (`Schemas/PROTOCOL.md` section 5.13): a JOB has nine
/// frames, F7 the idempotency key and F8 the attempt; the broker may CANCEL a job.
@Suite struct BrokerMessageVersion2Tests {
    let decoder = BrokerMessageDecoder()
    let jobID: [UInt8] = [7, 0, 0, 0, 0, 0, 0, 1]
    static let body = bytes(#"{"intent":{"type":"Echo"}}"#)

    /// A valid `CIPW02` JOB with this key and attempt; `change` replaces frames.
    func job(key: [UInt8] = bytes("k-1"), attempt: String = "3", _ change: [Int: [UInt8]] = [:]) -> [[UInt8]] {
        var result = [
            bytes("CIPW02"), bytes("JOB"), jobID, bytes("Echo"), bytes("handle"), bytes("500"), Self.body, key,
            bytes(attempt),
        ]
        for (index, frame) in change { result[index] = frame }
        return result
    }

    /// The error decoding `frames` throws, or nil when it decodes.
    func error(_ frames: [[UInt8]]) -> BrokerMessageError? { decoder.error(frames) }

    @Test func aVersion2JobCarriesItsKeyAttemptAndVersion() throws {
        let command = try decoder.decode(job())
        let expected = WorkerJob(
            jobID: jobID, intentType: "Echo", phase: .handle, timeLeftMilliseconds: 500, bodySize: Self.body.count,
            idempotencyKey: bytes("k-1"), attempt: 3, version: 2)
        #expect(command == .job(expected))
        guard case .job(let first) = try decoder.decode(job(attempt: "1")) else {
            Issue.record("not a JOB")
            return
        }
        #expect(first.attempt == 1 && first.version == 2)
    }

    @Test func aVersion1JobHasNoKeyAttemptOneAndVersionOne() throws {
        let v1 = Array(job().prefix(7)).enumerated().map { $0.offset == 0 ? bytes("CIPW01") : $0.element }
        guard case .job(let decoded) = try decoder.decode(v1) else {
            Issue.record("not a JOB")
            return
        }
        #expect(decoded.idempotencyKey == nil && decoded.attempt == 1 && decoded.version == 1)
    }

    @Test func anEmptyKeyIsNoKeyAndAKeyOf255BytesIsKept() throws {
        guard case .job(let keyless) = try decoder.decode(job(key: [], attempt: "1")) else {
            Issue.record("not a JOB")
            return
        }
        #expect(keyless.idempotencyKey == nil && keyless.attempt == 1 && keyless.version == 2)
        let longest = [UInt8](repeating: 0xFF, count: 255)  // opaque: need not be UTF-8
        guard case .job(let keyed) = try decoder.decode(job(key: longest)) else {
            Issue.record("not a JOB")
            return
        }
        #expect(keyed.idempotencyKey == longest)
    }

    @Test func anUnusableVersion2JobIsAnsweredMalformedWithItsJobID() {
        let cases: [(String, [[UInt8]])] = [
            ("10 frames", job() + [bytes("x")]),
            ("8 frames", Array(job().prefix(8))),
            ("a version-1 JOB under CIPW02", Array(job().prefix(7))),
            ("a 256-byte key", job(key: [UInt8](repeating: 0x6B, count: 256))),
            ("attempt 0", job(attempt: "0")),
            ("attempt x", job(attempt: "x")),
            ("attempt empty", job(attempt: "")),
            ("attempt -1", job(attempt: "-1")),
        ]
        for (name, message) in cases {
            let error = error(message)
            #expect(error?.code == .malformed, "\(name)")
            #expect(error?.check == 3, "\(name)")
            #expect(error?.jobID == jobID, "\(name)")
        }
        // A version-2 JOB of 9 frames under CIPW01 is a wrong frame count too.
        let nineUnderV1 = job().enumerated().map { $0.offset == 0 ? bytes("CIPW01") : $0.element }
        #expect(error(nineUnderV1)?.jobID == jobID)
        #expect(error(nineUnderV1)?.check == 3)
    }

    @Test func theOtherJobChecksStillApplyInVersion2() {
        #expect(error(job([4: bytes("lifecycle")]))?.check == 4)
        #expect(error(job([3: []]))?.check == 5)
        #expect(error(job([5: bytes("soon")]))?.check == 6)
        #expect(error(job([6: []]))?.check == 7)
    }

    @Test func aVersion2CancelDecodesWithItsJobID() throws {
        #expect(try decoder.decode([bytes("CIPW02"), bytes("CANCEL"), jobID]) == .cancel(jobID: jobID))
    }

    @Test func aBadCancelIsRefusedWithoutAJobIDToAnswer() {
        let bad: [[[UInt8]]] = [
            [bytes("CIPW02"), bytes("CANCEL")],
            [bytes("CIPW02"), bytes("CANCEL"), [1, 2, 3]],
            [bytes("CIPW02"), bytes("CANCEL"), []],
            [bytes("CIPW02"), bytes("CANCEL"), jobID, bytes("extra")],
        ]
        for message in bad {
            let error = error(message)
            #expect(error?.code == .malformed, "\(message)")
            #expect(error?.check == 3, "\(message)")
            #expect(error?.jobID == nil, "\(message)")  // never answered: a worker answers only JOBs
        }
    }

    @Test func aVersion1CancelIsAnUnknownCommand() {
        let error = error([bytes("CIPW01"), bytes("CANCEL"), jobID])
        #expect(error?.check == 2)
        #expect(error?.jobID == nil)
    }

    @Test func theOtherCommandsDecodeUnderEitherSignature() throws {
        for signature in ["CIPW01", "CIPW02"] {
            #expect(try decoder.decode(frames(signature, "HEARTBEAT")) == .heartbeat)
            #expect(try decoder.decode(frames(signature, "DRAIN")) == .drain)
            #expect(try decoder.decode(frames(signature, "DISCONNECT")) == .disconnect)
            #expect(
                try decoder.decode(frames(signature, "ERROR", "malformed", "m"))
                    == .error(code: "malformed", message: "m"))
        }
        #expect(error(frames("CIPW07", "HEARTBEAT"))?.check == 1)
    }
}
