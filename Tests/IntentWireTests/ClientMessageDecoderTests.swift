import IntentWire
import Testing

/// The broker's checks of client messages, in the order of PROTOCOL.md section 4.8.
@Suite struct ClientMessageDecoderTests {
    let decoder = ClientMessageDecoder()

    // MARK: Happy paths

    @Test func aRequestDecodesWithEveryField() throws {
        let command = try decoder.decode(request([2: bytes("m-1"), 3: bytes("SendMessage"), 4: bytes("lifecycle")]))
        let expected = ClientRequest(
            requestID: bytes("m-1"), intentType: bytes("SendMessage"), phase: .lifecycle, deadlineMilliseconds: nil,
            bodySize: request()[6].count
        )
        #expect(command == .request(expected))
        guard case .request(let decoded) = command else { return }
        #expect(decoded.intentTypeName == "SendMessage")
    }

    @Test(arguments: RequestPhase.allCases) func everyPhaseIsAccepted(phase: RequestPhase) throws {
        guard case .request(let decoded) = try decoder.decode(request([4: bytes(phase.description)])) else {
            Issue.record("not a request")
            return
        }
        #expect(decoded.phase == phase)
    }

    @Test(arguments: [("10", 10), ("500", 500), ("0003000", 3000), ("60000", 60000)])
    func deadlinesWithinBoundsAreAccepted(frame: String, milliseconds: Int) throws {
        guard case .request(let decoded) = try decoder.decode(request([5: bytes(frame)])) else {
            Issue.record("not a request")
            return
        }
        #expect(decoded.deadlineMilliseconds == milliseconds)
    }

    @Test func aBodyOfExactlyTheMaximumSizeIsAccepted() throws {
        let decoder = ClientMessageDecoder(limits: WireLimits(maxBodySize: 100))
        let command = try decoder.decode(request([6: [UInt8](repeating: 0x20, count: 100)]))
        guard case .request(let decoded) = command else {
            Issue.record("not a request")
            return
        }
        #expect(decoded.bodySize == 100)
    }

    @Test func intentTypesMayBeAnyUTF8() throws {
        #expect(throws: Never.self) { try decoder.decode(request([3: bytes("Café.Größe-1_x")])) }
        #expect(throws: Never.self) { try decoder.decode(request([3: [UInt8](repeating: 0x41, count: 255)])) }
    }

    @Test func statusAndPingDecode() throws {
        #expect(try decoder.decode(frames("CIPC01", "STATUS", "e-1")) == .status(requestID: bytes("e-1")))
        #expect(try decoder.decode(frames("CIPC01", "PING")) == .ping)
        // PING ignores any further frames.
        #expect(try decoder.decode(frames("CIPC01", "PING", "extra", "")) == .ping)
    }

    @Test func aMessageOfExactlyTheFrameLimitIsAccepted() throws {
        let message = frames("CIPC01", "PING") + Array(repeating: [], count: 62)
        #expect(try decoder.decode(message) == .ping)
    }

    // MARK: Checks 1-3

    @Test func fewerThanTwoFramesIsMalformedWithNothingToEcho() {
        for message in [[], frames("CIPC01")] {
            let error = decoder.error(message)
            #expect(error?.code == .malformed)
            #expect(error?.check == 1)
            #expect(error?.requestID == [])
            #expect(error?.phase == nil)
            #expect(error?.answer == .reply)
        }
    }

    @Test func moreFramesThanTheLimitIsMalformedAndEchoesF2() {
        let message = frames("CIPC01", "PING", "p-1") + Array(repeating: [], count: 62)
        let error = decoder.error(message)
        #expect(error?.code == .malformed)
        #expect(error?.check == 1)
        #expect(error?.requestID == bytes("p-1"))
    }

    @Test func framesDroppedByTheReceiverCountAsTooMany() {
        let error = WireFrames.withFrames(frames("CIPC01", "PING", "p-1"), dropped: 1) {
            frames -> ClientMessageError? in
            do throws(ClientMessageError) {
                _ = try decoder.decode(frames)
                return nil
            } catch {
                return error
            }
        }
        #expect(error?.code == .malformed)
        #expect(error?.check == 1)
        #expect(error?.requestID == bytes("p-1"))
    }

    @Test(arguments: ["CIPC09", "CIPW01", "MDPC01", "", "CIPC01 ", "cipc01"])
    func anotherSignatureIsUnsupportedVersionWithEmptyF2(signature: String) {
        let error = decoder.error(frames(signature, "REQUEST", "r1", "Echo", "handle", "", "{}"))
        #expect(error?.code == .unsupportedVersion)
        #expect(error?.check == 2)
        #expect(error?.requestID == [])
        #expect(error?.phase == nil)
    }

    @Test(arguments: ["FROB", "", "request", "READY", "REPLY", "PONG"])
    func anUnknownCommandIsUnknownCommandAndEchoesF2(command: String) {
        let error = decoder.error(frames("CIPC01", command, "r2"))
        #expect(error?.code == .unknownCommand)
        #expect(error?.check == 3)
        #expect(error?.requestID == bytes("r2"))
        #expect(error?.answer == .reply)
    }

    @Test func anF2LongerThan255BytesIsNotEchoed() {
        let long = [UInt8](repeating: 0x61, count: 256)
        #expect(decoder.error([bytes("CIPC01"), bytes("FROB"), long])?.requestID == [])
        let exact = [UInt8](repeating: 0x61, count: 255)
        #expect(decoder.error([bytes("CIPC01"), bytes("FROB"), exact])?.requestID == exact)
    }

    @Test func aHugeUnknownCommandIsCutInTheMessage() {
        let command = [UInt8](repeating: 0x58, count: 100_000)
        let error = decoder.error([bytes("CIPC01"), command])
        #expect(error?.code == .unknownCommand)
        #expect((error?.message.utf8.count ?? .max) < 200)
    }

    // MARK: STATUS

    @Test func aMalformedStatusIsAnsweredWithStatus() {
        let cases: [([[UInt8]], [UInt8])] = [
            (frames("CIPC01", "STATUS"), []),
            (frames("CIPC01", "STATUS", "s-1", "extra"), bytes("s-1")),
            (frames("CIPC01", "STATUS", ""), []),
            ([bytes("CIPC01"), bytes("STATUS"), [UInt8](repeating: 0x61, count: 256)], []),
        ]
        for (message, echoed) in cases {
            let error = decoder.error(message)
            #expect(error?.code == .malformed, "\(message)")
            #expect(error?.answer == .status)
            #expect(error?.requestID == echoed)
            #expect(error?.phase == nil)
            #expect(error?.check == 4)
        }
    }

    // MARK: REQUEST checks 4-10

    @Test func aRequestWithTheWrongFrameCountIsMalformedAndEchoesF2() {
        for message in [Array(request().dropLast()), request() + [bytes("extra")], frames("CIPC01", "REQUEST")] {
            let error = decoder.error(message)
            #expect(error?.code == .malformed)
            #expect(error?.check == 4)
            #expect(error?.requestID == (message.count > 2 ? bytes("r-1") : []))
            #expect(error?.phase == nil)
        }
    }

    @Test func anEmptyOrLongRequestIDIsBadRequestIDWithEmptyF2() {
        for id in [[], [UInt8](repeating: 0x61, count: 256)] {
            let error = decoder.error(request([2: id]))
            #expect(error?.code == .badRequestID)
            #expect(error?.check == 5)
            #expect(error?.requestID == [])
            #expect(error?.phase == nil)
        }
    }

    @Test(arguments: ["dance", "", "Resolve", "resolve ", "lifecycles", "job"])
    func anUnknownPhaseIsBadPhaseWithF2AndEmptyF4(phase: String) {
        let error = decoder.error(request([4: bytes(phase)]))
        #expect(error?.code == .badPhase)
        #expect(error?.check == 6)
        #expect(error?.requestID == bytes("r-1"))
        #expect(error?.phase == nil)
        #expect(error?.phaseFrame.description == "")
    }

    @Test func anEmptyLongOrNonUTF8IntentTypeIsMalformedWithF2AndF4() {
        for type in [[], [UInt8](repeating: 0x41, count: 256), [0x45, 0xFF], [0xC0, 0x80], [0xED, 0xA0, 0x80]] {
            let error = decoder.error(request([3: type]))
            #expect(error?.code == .malformed, "\(type)")
            #expect(error?.check == 7)
            #expect(error?.requestID == bytes("r-1"))
            #expect(error?.phase == .handle)
            #expect(error?.phaseFrame.description == "handle")
        }
    }

    @Test(arguments: ["soon", "5", "9", "0", "60001", "0000000010", "+100", " 100", "100 ", "100.0", "-10", "1e3"])
    func aDeadlineOutOfBoundsOrNotDecimalIsBadDeadline(deadline: String) {
        let error = decoder.error(request([5: bytes(deadline)]))
        #expect(error?.code == .badDeadline)
        #expect(error?.check == 8)
        #expect(error?.requestID == bytes("r-1"))
        #expect(error?.phase == .handle)
        #expect(error?.message == "deadline must be a decimal number of milliseconds from 10 to 60000")
    }

    @Test func theHardLimitCapsTheDeadline() {
        let decoder = ClientMessageDecoder(limits: WireLimits(hardLimitMilliseconds: 1500))
        #expect(decoder.error(request([5: bytes("1500")])) == nil)
        let error = decoder.error(request([5: bytes("1501")]))
        #expect(error?.code == .badDeadline)
        #expect(error?.message.hasSuffix("from 10 to 1500") == true)
    }

    @Test func anEmptyBodyIsMalformed() {
        let error = decoder.error(request([6: []]))
        #expect(error?.code == .malformed)
        #expect(error?.check == 9)
        #expect(error?.phase == .handle)
    }

    @Test func aBodyAboveTheMaximumIsTooLarge() {
        let decoder = ClientMessageDecoder(limits: WireLimits(maxBodySize: 100))
        let error = decoder.error(request([6: [UInt8](repeating: 0x20, count: 101)]))
        #expect(error?.code == .tooLarge)
        #expect(error?.check == 10)
        #expect(error?.requestID == bytes("r-1"))
        #expect(error?.phase == .handle)
        #expect(error?.message == "body of 101 bytes exceeds the maximum of 100")
    }

    // MARK: Order

    @Test func theFirstFailedCheckWins() {
        let decoder = ClientMessageDecoder(limits: WireLimits(maxBodySize: 1))
        let cases: [([[UInt8]], WireErrorCode, Int)] = [
            // signature before frame count
            (frames("CIPC09", "REQUEST", "r"), .unsupportedVersion, 2),
            // frame count before request id
            (frames("CIPC01", "REQUEST", "", "", "", "", ""), .badRequestID, 5),
            (frames("CIPC01", "REQUEST", "", "", "", ""), .malformed, 4),
            // request id before phase, phase before intent type
            (request([2: [], 4: bytes("x")]), .badRequestID, 5),
            (request([3: [], 4: bytes("x")]), .badPhase, 6),
            // intent type before deadline, deadline before body
            (request([3: [], 5: bytes("x")]), .malformed, 7),
            (request([5: bytes("x"), 6: []]), .badDeadline, 8),
            (request([5: bytes("x"), 6: bytes("too long")]), .badDeadline, 8),
            (request([6: []]), .malformed, 9),
        ]
        for (message, code, check) in cases {
            let error = decoder.error(message)
            #expect(error?.code == code, "\(message)")
            #expect(error?.check == check, "\(message)")
        }
    }

    @Test func theErrorBodyIsTheStandardErrorObject() {
        let error = decoder.error(request([4: bytes("dance")]))
        #expect(
            error?.body
                == bytes(#"{"code":"bad-phase","message":"phase must be resolve, confirm, handle or lifecycle"}"#)
        )
        #expect(error?.description == "bad-phase (check 6): phase must be resolve, confirm, handle or lifecycle")
    }
}
