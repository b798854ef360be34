import IntentWire
import Testing

/// The worker's checks of broker messages (PROTOCOL.md section 5.12, worker side, W1-W7).
@Suite struct BrokerMessageDecoderTests {
    let decoder = BrokerMessageDecoder()
    let jobID: [UInt8] = [5, 0, 0, 0, 0, 0, 0, 0]

    func job(_ change: [Int: [UInt8]] = [:]) -> [[UInt8]] {
        var result = [
            bytes("CIPW01"), bytes("JOB"), jobID, bytes("Echo"), bytes("handle"), bytes("500"),
            bytes(#"{"intent":{"type":"Echo"}}"#),
        ]
        for (index, frame) in change { result[index] = frame }
        return result
    }

    @Test func aJobDecodesWithEveryField() throws {
        let command = try decoder.decode(job())
        let expected = WorkerJob(
            jobID: jobID, intentType: "Echo", phase: .handle, timeLeftMilliseconds: 500, bodySize: job()[6].count)
        #expect(command == .job(expected))
        guard case .job(let decoded) = try decoder.decode(job([4: bytes("resolve"), 5: bytes("0")])) else {
            Issue.record("not a JOB")
            return
        }
        #expect(decoded.phase == .resolve)
        #expect(decoded.timeLeftMilliseconds == 0)
    }

    @Test func heartbeatDrainDisconnectAndErrorDecode() throws {
        #expect(try decoder.decode(frames("CIPW01", "HEARTBEAT")) == .heartbeat)
        #expect(try decoder.decode(frames("CIPW01", "DRAIN")) == .drain)
        #expect(try decoder.decode(frames("CIPW01", "DISCONNECT")) == .disconnect)
        #expect(
            try decoder.decode(frames("CIPW01", "ERROR", "malformed", "READY takes ..."))
                == .error(code: "malformed", message: "READY takes ...")
        )
        #expect(try decoder.decode(frames("CIPW01", "ERROR")) == .error(code: "", message: ""))
    }

    @Test func messagesThatAreNotCIPW01OrHaveAnUnknownCommandAreIgnored() {
        let cases: [([[UInt8]], Int)] = [
            ([], 1), (frames("CIPW01"), 1), (frames("CIPC01", "JOB"), 1), (frames("CIPW09", "HEARTBEAT"), 1),
            (frames("CIPW01", "FROB"), 2), (frames("CIPW01", "READY"), 2), (frames("CIPW01", "RESULT"), 2),
        ]
        for (message, check) in cases {
            let error = decoder.error(message)
            #expect(error?.check == check, "\(message)")
            #expect(error?.jobID == nil)
        }
    }

    @Test func aJobWithTheWrongFrameCountIsAnsweredWhenItsJobIDIsUsable() {
        let answered = [Array(job().dropLast()), job() + [bytes("x")], Array(job().prefix(3))]
        for message in answered {
            let error = decoder.error(message)
            #expect(error?.code == .malformed)
            #expect(error?.check == 3)
            #expect(error?.jobID == jobID)
        }
        let ignored = [
            frames("CIPW01", "JOB"), job([2: [1, 2, 3]]), Array(job([2: [1, 2, 3]]).dropLast()), job([2: []]),
        ]
        for message in ignored {
            let error = decoder.error(message)
            #expect(error?.check == 3)
            #expect(error?.jobID == nil)
        }
    }

    @Test func aJobWhoseFramesWereDroppedIsAnsweredMalformed() {
        let error = WireFrames.withFrames(Array(job().prefix(4)), dropped: 3) { frames -> BrokerMessageError? in
            do throws(BrokerMessageError) {
                _ = try decoder.decode(frames)
                return nil
            } catch {
                return error
            }
        }
        #expect(error?.check == 3)
        #expect(error?.jobID == jobID)
    }

    @Test func theJobFramesAreCheckedInOrder() {
        let cases: [([[UInt8]], Int)] = [
            (job([4: bytes("lifecycle")]), 4),
            (job([4: bytes("dance"), 3: []]), 4),
            (job([3: []]), 5),
            (job([3: [UInt8](repeating: 0x41, count: 256)]), 5),
            (job([3: [0x45, 0xC3]]), 5),
            (job([3: [], 5: bytes("x")]), 5),
            (job([5: bytes("x")]), 6),
            (job([5: []]), 6),
            (job([5: bytes("-1")]), 6),
            (job([5: bytes("x"), 6: []]), 6),
            (job([6: []]), 7),
        ]
        for (message, check) in cases {
            let error = decoder.error(message)
            #expect(error?.code == .malformed, "\(message)")
            #expect(error?.check == check, "\(message)")
            #expect(error?.jobID == jobID)
        }
    }
}
