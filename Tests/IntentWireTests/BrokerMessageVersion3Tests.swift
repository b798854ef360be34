import IntentWire
import Testing

/// Version 03 of the worker protocol as a worker decodes it (`Schemas/PROTOCOL.md` section 5.15): a JOB has ten
/// frames, F9 the last phase the worker runs on its own.
@Suite struct BrokerMessageVersion3Tests {
    let decoder = BrokerMessageDecoder()
    let jobID: [UInt8] = [7, 0, 0, 0, 0, 0, 0, 2]
    static let body = bytes(#"{"intent":{"type":"SendPayment"}}"#)

    /// A valid `CIPW03` JOB for `phase` through `last`.
    func job(phase: String = "resolve", last: String = "handle", frames count: Int = 10) -> [[UInt8]] {
        let frames = [
            bytes("CIPW03"), bytes("JOB"), jobID, bytes("SendPayment"), bytes(phase), bytes("500"), Self.body, [],
            bytes("1"), bytes(last),
        ]
        return Array(frames.prefix(count))
    }

    @Test func aVersion3JobCarriesItsLastPhase() throws {
        let command = try decoder.decode(job())
        let expected = WorkerJob(
            jobID: jobID, intentType: "SendPayment", phase: .resolve, timeLeftMilliseconds: 500,
            bodySize: Self.body.count, lastPhase: .handle, version: 3)
        #expect(command == .job(expected))
        guard case .job(let single) = try decoder.decode(job(phase: "handle", last: "handle")) else {
            Issue.record("not a JOB")
            return
        }
        #expect(single.phase == .handle && single.lastPhase == .handle)
    }

    @Test func olderVersionsRunOnePhaseAJob() throws {
        let v2 = Array(job(frames: 9).enumerated().map { $0.offset == 0 ? bytes("CIPW02") : $0.element })
        guard case .job(let decoded) = try decoder.decode(v2) else {
            Issue.record("not a JOB")
            return
        }
        #expect(decoded.version == 2 && decoded.lastPhase == decoded.phase)
    }

    @Test func aLastPhaseBeforeThePhaseOrNotAJobPhaseIsAnsweredMalformedWithItsJobID() {
        for (phase, last) in [("confirm", "resolve"), ("handle", "confirm"), ("resolve", "lifecycle"), ("resolve", "")]
        {
            let error = decoder.error(job(phase: phase, last: last))
            #expect(error?.check == 4, "\(phase) through \(last)")
            #expect(error?.jobID == jobID)
            #expect(error?.code == .malformed)
        }
    }

    @Test func aVersion3JobOfNineOrElevenFramesIsAnsweredMalformedNamingTheTenFrames() {
        for frames in [job(frames: 9), job() + [bytes("extra")]] {
            let error = decoder.error(frames)
            #expect(error?.check == 3)
            #expect(error?.jobID == jobID)
            #expect(error?.message.contains("JOB takes 10 frames: CIPW03") == true, "\(String(describing: error))")
        }
    }

    @Test func cancelAndTheOtherCommandsDecodeUnderTheVersion3Signature() throws {
        #expect(try decoder.decode([bytes("CIPW03"), bytes("CANCEL"), jobID]) == .cancel(jobID: jobID))
        #expect(try decoder.decode([bytes("CIPW03"), bytes("HEARTBEAT")]) == .heartbeat)
        #expect(decoder.error([bytes("CIPW03"), bytes("CANCEL")])?.message.contains("CIPW03, CANCEL") == true)
    }

    @Test func theBrokerTakesAVersion3ReadyAndStatsQuery() throws {
        let workers = WorkerMessageDecoder()
        let ready = try workers.decode(
            [bytes("CIPW03"), bytes("READY"), bytes("4"), bytes("w1"), bytes("SendPayment")], isRegistered: false)
        guard case .ready(let registration) = ready else {
            Issue.record("not a READY: \(ready)")
            return
        }
        #expect(registration.version == 3)
        #expect(try workers.isStatsQuery([bytes("CIPW03"), bytes("STATS")]))
        #expect(throws: WorkerMessageError.self) { try workers.isStatsQuery([bytes("CIPW03"), bytes("STATS"), []]) }
        // Errors name the frames in the sender's version.
        do throws(WorkerMessageError) {
            _ = try workers.isStatsQuery([bytes("CIPW03"), bytes("STATS"), []])
            Issue.record("a STATS with 3 frames passed")
        } catch {
            #expect(error.message.contains("CIPW03, STATS"), "\(error)")
        }
        let result = workers.error([bytes("CIPW03"), bytes("RESULT"), jobID, bytes("stop")], isRegistered: true)
        #expect(result?.message.contains("5 frames: CIPW03, RESULT") == true, "\(String(describing: result))")
    }
}
