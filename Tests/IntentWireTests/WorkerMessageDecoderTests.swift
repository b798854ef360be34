import IntentWire
import Testing

/// The broker's checks of worker messages, in the order of PROTOCOL.md section 5.12.
@Suite struct WorkerMessageDecoderTests {
    let decoder = WorkerMessageDecoder()
    let jobID: [UInt8] = [1, 0, 0, 0, 0, 0, 0, 0]

    func result(_ outcome: String = "stop", body: String = "{}") -> [[UInt8]] {
        [bytes("CIPW01"), bytes("RESULT"), jobID, bytes(outcome), bytes(body)]
    }

    // MARK: Happy paths

    @Test func aReadyDecodesWithRepeatedIntentTypesLeftOut() throws {
        let command = try decoder.decode(
            frames("CIPW01", "READY", "16", "worker-4711", "Echo", "RequestRide", "Echo", "SendMessage"),
            isRegistered: false
        )
        let expected = WorkerReady(
            capacity: 16, name: bytes("worker-4711"),
            intentTypes: [bytes("Echo"), bytes("RequestRide"), bytes("SendMessage")]
        )
        #expect(command == .ready(expected))
        guard case .ready(let ready) = command else { return }
        #expect(ready.nameString == "worker-4711")
    }

    @Test func aReadyFromARegisteredRoutingIDIsANewRegistration() throws {
        let command = try decoder.decode(frames("CIPW01", "READY", "0001", "w", "Echo"), isRegistered: true)
        #expect(command == .ready(WorkerReady(capacity: 1, name: bytes("w"), intentTypes: [bytes("Echo")])))
    }

    @Test func aReadyMayServeUpToTheFrameLimit() throws {
        let types = (0..<60).map { "T\($0)" }
        let message = frames("CIPW01", "READY", "1000", "w") + types.map(bytes)
        guard case .ready(let ready) = try decoder.decode(message, isRegistered: false) else {
            Issue.record("not a READY")
            return
        }
        #expect(ready.intentTypes.count == 60)
        #expect(ready.capacity == 1000)
        #expect(decoder.error(message + [bytes("T60")], isRegistered: false)?.check == 1)
    }

    @Test func resultsDecodeEveryOutcome() throws {
        let cases: [(String, WorkerResult.Outcome)] = [
            ("continue", .continue), ("stop", .stop), ("error", .error), ("maybe", .stop), ("", .stop),
        ]
        for (word, outcome) in cases {
            let command = try decoder.decode(result(word, body: "{\"a\":1}"), isRegistered: true)
            #expect(command == .result(WorkerResult(jobID: 1, outcome: outcome, bodySize: 7)), "\(word)")
        }
    }

    @Test func theJobIDIsItsEightBytesInHostOrder() throws {
        let id: [UInt8] = [0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08]
        let command = try decoder.decode(
            [bytes("CIPW01"), bytes("RESULT"), id, bytes("stop"), bytes("{}")], isRegistered: true)
        let expected = id.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }
        #expect(command == .result(WorkerResult(jobID: expected, outcome: .stop, bodySize: 2)))
    }

    @Test func heartbeatDrainAndDisconnectDecode() throws {
        #expect(try decoder.decode(frames("CIPW01", "HEARTBEAT"), isRegistered: true) == .heartbeat)
        #expect(try decoder.decode(frames("CIPW01", "DRAIN"), isRegistered: true) == .drain)
        #expect(try decoder.decode(frames("CIPW01", "DISCONNECT"), isRegistered: true) == .disconnect)
        // Further frames are ignored.
        #expect(try decoder.decode(frames("CIPW01", "HEARTBEAT", "x"), isRegistered: true) == .heartbeat)
    }

    // MARK: Checks 1-3

    @Test func fewerThanTwoOrTooManyFramesIsMalformed() {
        for message in [[], frames("CIPW01"), frames("CIPW01", "HEARTBEAT") + Array(repeating: [], count: 63)] {
            let error = decoder.error(message)
            #expect(error?.code == .malformed)
            #expect(error?.check == 1)
            #expect(error?.isFromRegisteredWorker == false)
        }
    }

    @Test(arguments: ["CIPW09", "CIPC01", "", "MDPW01"])
    func anotherSignatureIsUnsupportedVersion(signature: String) {
        let error = decoder.error(frames(signature, "READY", "1", "rogue", "Echo"))
        #expect(error?.code == .unsupportedVersion)
        #expect(error?.check == 2)
    }

    @Test func aMalformedReadyIsMalformedWhetherOrNotRegistered() {
        let long = String(repeating: "n", count: 256)
        let messages: [[[UInt8]]] = [
            frames("CIPW01", "READY", "1", "w"),
            frames("CIPW01", "READY"),
            frames("CIPW01", "READY", "many", "rogue", "Echo"),
            frames("CIPW01", "READY", "0", "w", "Echo"),
            frames("CIPW01", "READY", "1001", "w", "Echo"),
            frames("CIPW01", "READY", "", "w", "Echo"),
            frames("CIPW01", "READY", "-1", "w", "Echo"),
            frames("CIPW01", "READY", "0000000001", "w", "Echo"),
            frames("CIPW01", "READY", "1", "", "Echo"),
            frames("CIPW01", "READY", "1", long, "Echo"),
            [bytes("CIPW01"), bytes("READY"), bytes("1"), [0, 0x77], bytes("Echo")],
            [bytes("CIPW01"), bytes("READY"), bytes("1"), [0x77, 0xFE], bytes("Echo")],
            frames("CIPW01", "READY", "1", "w", "Echo", ""),
            frames("CIPW01", "READY", "1", "w", long),
            [bytes("CIPW01"), bytes("READY"), bytes("1"), bytes("w"), [0xF4, 0x90, 0x80, 0x80]],
        ]
        for message in messages {
            for registered in [false, true] {
                let error = decoder.error(message, isRegistered: registered)
                #expect(error?.code == .malformed, "\(message)")
                #expect(error?.check == 3)
                #expect(error?.command == .ready)
                #expect(error?.isFromRegisteredWorker == false)
            }
        }
    }

    @Test func theReadyExampleOfTheSpecGetsItsMessage() {
        let error = decoder.error(frames("CIPW01", "READY", "1", "w"))
        #expect(error?.message == "READY takes CIPW01, READY, capacity (1-1000), name, and one frame per intent type")
    }

    // MARK: Check 4

    @Test func anythingButReadyFromAnUnregisteredWorkerIsUnregistered() throws {
        let cases: [([[UInt8]], WorkerCommand.Name?)] = [
            (result(), .result),
            ([bytes("CIPW01"), bytes("RESULT"), [1], bytes("stop")], .result),  // before check 6
            (frames("CIPW01", "HEARTBEAT"), .heartbeat),
            (frames("CIPW01", "DRAIN"), .drain),
            (frames("CIPW01", "DISCONNECT"), .disconnect),
            (frames("CIPW01", "FROB"), nil),  // before check 5
            (frames("CIPW01", "JOB"), nil),
        ]
        for (message, name) in cases {
            #expect(try decoder.decode(message, isRegistered: false) == .unregistered(name), "\(message)")
        }
    }

    // MARK: Checks 5 and 6

    @Test(arguments: ["FROB", "", "JOB", "ERROR", "ready", "REQUEST"])
    func anUnknownCommandFromARegisteredWorkerIsUnknownCommand(command: String) {
        let error = decoder.error(frames("CIPW01", command))
        #expect(error?.code == .unknownCommand)
        #expect(error?.check == 5)
        #expect(error?.isFromRegisteredWorker == true)
        #expect(error?.message == "unknown command \"\(command)\"")
    }

    @Test func aMalformedResultIsMalformed() {
        let messages: [[[UInt8]]] = [
            Array(result().dropLast()),
            result() + [bytes("extra")],
            [bytes("CIPW01"), bytes("RESULT"), [1, 0, 0, 0, 0, 0, 0], bytes("stop"), bytes("{}")],
            [bytes("CIPW01"), bytes("RESULT"), [1, 0, 0, 0, 0, 0, 0, 0, 0], bytes("stop"), bytes("{}")],
            [bytes("CIPW01"), bytes("RESULT"), [], bytes("stop"), bytes("{}")],
            result(body: ""),
        ]
        for message in messages {
            let error = decoder.error(message)
            #expect(error?.code == .malformed, "\(message)")
            #expect(error?.check == 6)
            #expect(error?.command == .result)
            #expect(error?.isFromRegisteredWorker == true)
        }
    }
}
