import ConciergeJSON
import IntentWire
import PropertyBased
import Testing

/// The encoders write the frames of the specification's tables, and the decoders read back what they wrote, for
/// every message and version (`Schemas/PROTOCOL.md` sections 4 and 5).
@Suite struct WireCodecTests {
    /// A sink that refuses every frame (a full queue): nothing is written, and the encoder says so.
    struct FullSink: WireSink {
        var appended = 0
        mutating func append(_ bytes: UnsafeRawBufferPointer, more: Bool) -> Bool { false }
        mutating func append(body: [UInt8], more: Bool) -> Bool { false }
    }

    static let body = bytes(#"{"intent":{"type":"Echo"}}"#)
    static let jobID = WireWord(0x0102_0304_0506_0708)
    static let jobIDBytes: [UInt8] = withUnsafeBytes(of: UInt64(0x0102_0304_0506_0708)) { Array($0) }
    static let traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
    static let trace = try! TraceContext(traceparent: traceparent, tracestate: "congo=t61rcWkgMzE")

    // MARK: Client to broker

    @Test func aRequestHasTheFramesOfSection4_2() {
        var list = WireFrameList()
        ClientMessageEncoder.request(
            into: &list, requestID: "r-1", intentType: "Echo", phase: .handle, deadlineMilliseconds: nil,
            body: .bytes(Self.body))
        #expect(list.frames == frames("CIPC01", "REQUEST", "r-1", "Echo", "handle", "", #"{"intent":{"type":"Echo"}}"#))
        var keyed = WireFrameList()
        ClientMessageEncoder.request(
            into: &keyed, version: 2, requestID: "r-2", intentType: "Echo", phase: .lifecycle,
            deadlineMilliseconds: 1250, body: .body(Self.body), idempotencyKey: bytes("k"))
        #expect(
            keyed.frames
                == frames("CIPC02", "REQUEST", "r-2", "Echo", "lifecycle", "1250", #"{"intent":{"type":"Echo"}}"#, "k"))
        #expect(keyed.messageEnds == [8])
        var traced = WireFrameList()
        ClientMessageEncoder.request(
            into: &traced, version: 4, requestID: "r-3", intentType: "Echo", phase: .handle,
            deadlineMilliseconds: nil, body: .bytes(Self.body), traceContext: Self.trace)
        ClientMessageEncoder.request(
            into: &traced, version: 4, requestID: "r-4", intentType: "Echo", phase: .handle,
            deadlineMilliseconds: nil, body: .bytes(Self.body), idempotencyKey: bytes("k"))
        #expect(
            traced.messages == [
                frames(
                    "CIPC04", "REQUEST", "r-3", "Echo", "handle", "", #"{"intent":{"type":"Echo"}}"#, "",
                    Self.traceparent, "congo=t61rcWkgMzE"),
                frames("CIPC04", "REQUEST", "r-4", "Echo", "handle", "", #"{"intent":{"type":"Echo"}}"#, "k", "", ""),
            ])
    }

    @Test func statusPingAndCancelHaveTheFramesOfSections4_3_4_4And4_10_2() {
        var list = WireFrameList()
        ClientMessageEncoder.status(into: &list, requestID: "r-1")
        ClientMessageEncoder.ping(into: &list)
        ClientMessageEncoder.cancel(into: &list, requestID: bytes("r-1"))
        ClientMessageEncoder.status(into: &list, version: 2, requestID: WireWord(7))
        #expect(
            list.messages == [
                frames("CIPC01", "STATUS", "r-1"), frames("CIPC01", "PING"), frames("CIPC02", "CANCEL", "r-1"),
                [bytes("CIPC02"), bytes("STATUS"), [7, 0, 0, 0, 0, 0, 0, 0]],
            ])
    }

    @Test func everyClientMessageDecodesToWhatWasEncoded() throws {
        let commands: [(ClientCommand, UInt8)] = [
            (
                .request(
                    ClientRequest(
                        requestID: bytes("r-1"), intentType: bytes("Echo"), phase: .handle, deadlineMilliseconds: nil,
                        bodySize: Self.body.count)), 1
            ),
            (
                .request(
                    ClientRequest(
                        requestID: bytes("r-2"), intentType: bytes("SendPayment"), phase: .lifecycle,
                        deadlineMilliseconds: 60_000, bodySize: Self.body.count, idempotencyKey: bytes("key"),
                        version: 2)), 2
            ),
            (
                .request(
                    ClientRequest(
                        requestID: bytes("r-3"), intentType: bytes("Echo"), phase: .resolve, deadlineMilliseconds: 10,
                        bodySize: Self.body.count, idempotencyKey: nil, version: 2)), 2
            ),
            (.status(requestID: bytes("r-1")), 1), (.status(requestID: bytes("r-1")), 2), (.ping, 1), (.ping, 2),
            (.cancel(requestID: bytes("r-9")), 2),
            (
                .request(
                    ClientRequest(
                        requestID: bytes("r-4"), intentType: bytes("Echo"), phase: .handle, deadlineMilliseconds: 20,
                        bodySize: Self.body.count, idempotencyKey: bytes("k"), version: 3)), 3
            ),
            (.status(requestID: bytes("r-1")), 3), (.ping, 3), (.cancel(requestID: bytes("r-9")), 3),
            (
                .turn(
                    ClientTurn(
                        requestID: bytes("t-1"), conversationID: bytes("c-1"), turn: 1, deadlineMilliseconds: nil,
                        bodySize: Self.body.count, flags: [.record, .confirm])), 3
            ),
            (
                .turn(
                    ClientTurn(
                        requestID: bytes("t-2"), conversationID: bytes("c-1"), turn: 2, deadlineMilliseconds: 5000,
                        bodySize: Self.body.count)), 3
            ),
            (.readConversation(conversationID: bytes("c-1")), 3), (.endConversation(conversationID: bytes("c-1")), 3),
            (
                .request(
                    ClientRequest(
                        requestID: bytes("r-5"), intentType: bytes("Echo"), phase: .lifecycle,
                        deadlineMilliseconds: nil, bodySize: Self.body.count, idempotencyKey: bytes("k"), version: 4,
                        traceContext: Self.trace)), 4
            ),
            (
                .request(
                    ClientRequest(
                        requestID: bytes("r-6"), intentType: bytes("Echo"), phase: .handle, deadlineMilliseconds: 10,
                        bodySize: Self.body.count, version: 4)), 4
            ),
            (
                .turn(
                    ClientTurn(
                        requestID: bytes("t-3"), conversationID: bytes("c-2"), turn: 1, deadlineMilliseconds: nil,
                        bodySize: Self.body.count, flags: [.record], version: 4, traceContext: Self.trace)), 4
            ),
            (
                .turn(
                    ClientTurn(
                        requestID: bytes("t-4"), conversationID: bytes("c-2"), turn: 2, deadlineMilliseconds: nil,
                        bodySize: Self.body.count, version: 4)), 4
            ),
            (.status(requestID: bytes("r-1")), 4), (.ping, 4), (.cancel(requestID: bytes("r-9")), 4),
            (.readConversation(conversationID: bytes("c-1")), 4), (.endConversation(conversationID: bytes("c-1")), 4),
        ]
        for (command, version) in commands {
            var list = WireFrameList()
            #expect(ClientMessageEncoder.command(into: &list, command, version: version, body: .bytes(Self.body)))
            #expect(list.messageEnds == [list.frames.count])
            #expect(try ClientMessageDecoder().decode(list.frames) == command)
            #expect(list.frames[0] == bytes("CIPC0\(version)"))
        }
    }

    @Test func conversationMessagesHaveTheFramesOfSection4_11() {
        var list = WireFrameList()
        ClientMessageEncoder.turn(
            into: &list, requestID: "t-1", conversationID: "c-1", turn: 1, deadlineMilliseconds: 1500,
            body: .bytes(Self.body), flags: [.record, .confirm])
        ClientMessageEncoder.turn(
            into: &list, requestID: "t-2", conversationID: "c-1", turn: 2, deadlineMilliseconds: nil,
            body: .bytes(bytes(#"{"parameter":"recipient","option":0}"#)))
        ClientMessageEncoder.conversation(into: &list, conversationID: "c-1")
        ClientMessageEncoder.end(into: &list, conversationID: "c-1")
        #expect(
            list.messages == [
                frames("CIPC03", "TURN", "t-1", "c-1", "1", "1500", #"{"intent":{"type":"Echo"}}"#, "record confirm"),
                frames("CIPC03", "TURN", "t-2", "c-1", "2", "", #"{"parameter":"recipient","option":0}"#, ""),
                frames("CIPC03", "CONVERSATION", "c-1"), frames("CIPC03", "END", "c-1"),
            ])
        var answer = WireFrameList()
        BrokerReplyEncoder.reply(
            into: &answer, to: bytes("client"), version: 3, kind: .conversation, requestID: "c-1", status: .final,
            phase: "", body: .bytes(bytes("{}")))
        #expect(answer.frames == frames("client", "CIPC03", "CONVERSATION", "c-1", "final", "", "{}", ""))
        var traced = WireFrameList()
        ClientMessageEncoder.turn(
            into: &traced, version: 4, requestID: "t-3", conversationID: "c-1", turn: 3, deadlineMilliseconds: nil,
            body: .bytes(Self.body), traceContext: Self.trace)
        #expect(
            traced.frames
                == frames(
                    "CIPC04", "TURN", "t-3", "c-1", "3", "", #"{"intent":{"type":"Echo"}}"#, "", Self.traceparent,
                    "congo=t61rcWkgMzE"))
    }

    @Test func theDecoderRefusesMalformedConversationMessages() {
        func code(_ frames: [[UInt8]]) -> WireErrorCode? {
            do {
                _ = try ClientMessageDecoder().decode(frames)
                return nil
            } catch { return error.code }
        }
        let body = #"{"confirm":true}"#
        #expect(code(frames("CIPC03", "TURN", "t", "c", "1", "", body)) == .malformed)  // 7 frames
        #expect(code(frames("CIPC03", "TURN", "t", "c", "0", "", body, "")) == .malformed)  // turn 0
        #expect(code(frames("CIPC03", "TURN", "t", "c", "x", "", body, "")) == .malformed)
        #expect(code(frames("CIPC03", "TURN", "t", "c c", "1", "", body, "")) == .malformed)  // a space in the id
        #expect(code(frames("CIPC03", "TURN", "t", "", "1", "", body, "")) == .malformed)
        #expect(code(frames("CIPC03", "TURN", "t", "c", "1", "5", body, "")) == .badDeadline)
        #expect(code(frames("CIPC03", "TURN", "t", "c", "1", "", "", "")) == .malformed)
        #expect(code(frames("CIPC03", "TURN", "t", "c", "1", "", body, "loud")) == .malformed)
        #expect(code(frames("CIPC03", "TURN", "t", "c", "1", "", body, "record  confirm")) == .malformed)
        #expect(code(frames("CIPC03", "TURN", "", "c", "1", "", body, "")) == .badRequestID)
        #expect(code(frames("CIPC02", "TURN", "t", "c", "1", "", body, "")) == .unknownCommand)  // version 03 only
        #expect(code(frames("CIPC03", "CONVERSATION")) == .malformed)
        #expect(code(frames("CIPC03", "END", "c", "extra")) == .malformed)
        #expect(code(frames("CIPC02", "END", "c")) == .unknownCommand)
        #expect(code(frames("CIPC05", "PING")) == .unsupportedVersion)
    }

    // MARK: Broker to client

    @Test func repliesHaveTheFramesOfSections4_5To4_7() {
        var list = WireFrameList()
        BrokerReplyEncoder.reply(
            into: &list, to: bytes("client"), kind: .reply, requestID: "r-1", status: .final, phase: "handle",
            body: .bytes(bytes("{}")))
        BrokerReplyEncoder.reply(
            into: &list, to: bytes("client"), version: 2, kind: .status, requestID: "r-1", status: .progress,
            phase: RequestPhase.confirm.name, body: .body(bytes("{}")))
        BrokerReplyEncoder.reply(
            into: &list, to: bytes("client"), version: 2, kind: .reply, requestID: "r-1", status: .final,
            phase: "handle", body: .bytes(bytes("{}")), isReplay: true)
        BrokerReplyEncoder.error(
            into: &list, to: bytes("client"), requestID: "", phase: "", code: .malformed, message: "no")
        BrokerReplyEncoder.pong(into: &list, to: bytes("client"), version: 2)
        #expect(
            list.messages == [
                frames("client", "CIPC01", "REPLY", "r-1", "final", "handle", "{}"),
                frames("client", "CIPC02", "STATUS", "r-1", "progress", "confirm", "{}", ""),
                frames("client", "CIPC02", "REPLY", "r-1", "final", "handle", "{}", "replay"),
                frames("client", "CIPC01", "REPLY", "", "error", "", #"{"code":"malformed","message":"no"}"#),
                frames("client", "CIPC02", "PONG"),
            ])
    }

    @Test func everyReplyDecodesToWhatWasEncoded() throws {
        for version: UInt8 in [1, 2, 3] {
            for kind in version == 3 ? [BrokerReply.Kind.reply, .status, .conversation] : [.reply, .status] {
                for status in BrokerReply.Status.allCases {
                    for replay in version >= 2 ? [false, true] : [false] {
                        var list = WireFrameList()
                        BrokerReplyEncoder.reply(
                            into: &list, to: bytes("c"), version: version, kind: kind, requestID: "id-1",
                            status: status, phase: "resolve", body: .bytes(bytes("[1]")), isReplay: replay)
                        try BrokerReplyDecoder().decode(Array(list.frames.dropFirst())) { reply in
                            #expect(reply.kind == kind && reply.version == version && reply.status == status)
                            #expect(Array(reply.requestID) == bytes("id-1") && Array(reply.phase) == bytes("resolve"))
                            #expect(Array(reply.body) == bytes("[1]") && reply.isReplay == replay)
                            #expect(reply.isFinal == (status != .progress))
                        }
                    }
                }
            }
            var list = WireFrameList()
            BrokerReplyEncoder.pong(into: &list, to: bytes("c"), version: version)
            try BrokerReplyDecoder().decode(Array(list.frames.dropFirst())) { reply in
                #expect(reply.kind == .pong && reply.version == version && !reply.isFinal)
            }
        }
    }

    @Test func theReplyDecoderRefusesWhatIsNotAReply() {
        func code(_ frames: [[UInt8]]) -> BrokerReplyError.Code? {
            do throws(BrokerReplyError) {
                try BrokerReplyDecoder().decode(frames) { _ in }
                return nil
            } catch {
                return error.code
            }
        }
        #expect(code(frames("CIPC05", "PONG")) == .signature)
        #expect(code(frames("CIPC01")) == .signature)
        #expect(code(frames("CIPC01", "PING")) == .command)
        #expect(code(frames("CIPC01", "PONG", "x")) == .frameCount)
        #expect(code(frames("CIPC01", "REPLY", "r", "final", "handle", "{}", "")) == .frameCount)
        #expect(code(frames("CIPC02", "REPLY", "r", "final", "handle", "{}")) == .frameCount)
        #expect(code(frames("CIPC01", "REPLY", "r", "done", "handle", "{}")) == .status)
        #expect(code(frames("CIPC01", "STATUS", "r", "error", "", "{}")) == nil)
    }

    // MARK: Worker to broker

    @Test func workerMessagesHaveTheFramesOfSections5_2To5_6() throws {
        var list = WireFrameList()
        WorkerMessageEncoder.ready(
            into: &list, version: 1, capacity: 4, name: "w-1", intentTypes: [(bytes("Echo"), nil), (bytes("A"), nil)])
        WorkerMessageEncoder.ready(
            into: &list, version: 4, capacity: 1, name: bytes("w-2"), intentTypes: [(bytes("Echo"), bytes("{}"))])
        WorkerMessageEncoder.result(
            into: &list, version: 3, jobID: Self.jobIDBytes, outcome: .continue, body: .bytes(Self.body))
        WorkerMessageEncoder.heartbeat(into: &list, version: 2)
        WorkerMessageEncoder.drain(into: &list, version: 1)
        WorkerMessageEncoder.disconnect(into: &list, version: 4)
        WorkerMessageEncoder.statsQuery(into: &list, version: 2)
        #expect(
            list.messages == [
                frames("CIPW01", "READY", "4", "w-1", "Echo", "A"), frames("CIPW04", "READY", "1", "w-2", "Echo", "{}"),
                [bytes("CIPW03"), bytes("RESULT"), Self.jobIDBytes, bytes("continue"), Self.body],
                frames("CIPW02", "HEARTBEAT"), frames("CIPW01", "DRAIN"), frames("CIPW04", "DISCONNECT"),
                frames("CIPW02", "STATS"),
            ])
    }

    @Test func everyWorkerMessageDecodesToWhatWasEncoded() throws {
        let definition = try AnnouncedDefinition(
            frame: bytes(#"{"intent":"Echo","version":2,"parameters":{}}"#), intentType: "Echo")
        for version: UInt8 in 1...4 {
            let ready = WorkerReady(
                capacity: 16, name: bytes("worker-\(version)"), intentTypes: [bytes("Echo")], version: version,
                definitions: version >= 4 ? [definition] : [])
            var list = WireFrameList()
            #expect(WorkerMessageEncoder.ready(into: &list, ready))
            #expect(try WorkerMessageDecoder().decode(list.frames, isRegistered: false) == .ready(ready))
            for outcome in JobOutcome.allCases {
                var result = WireFrameList()
                WorkerMessageEncoder.result(
                    into: &result, version: version, jobID: Self.jobID, outcome: outcome, body: .body(Self.body))
                #expect(
                    try WorkerMessageDecoder().decode(result.frames, isRegistered: true)
                        == .result(WorkerResult(jobID: Self.jobID.value, outcome: outcome, bodySize: Self.body.count)))
            }
            var control = WireFrameList()
            WorkerMessageEncoder.heartbeat(into: &control, version: version)
            WorkerMessageEncoder.drain(into: &control, version: version)
            WorkerMessageEncoder.disconnect(into: &control, version: version)
            let decoded = try control.messages.map { try WorkerMessageDecoder().decode($0, isRegistered: true) }
            #expect(decoded == [.heartbeat, .drain, .disconnect])
            var stats = WireFrameList()
            WorkerMessageEncoder.statsQuery(into: &stats, version: version)
            #expect(try WorkerMessageDecoder().isStatsQuery(stats.frames) == (version >= 2))
        }
    }

    // MARK: Broker to worker

    @Test func aJobHasTheFramesOfSections5_7_5_13And5_15() {
        var list = WireFrameList()
        for version: UInt8 in 1...6 {
            BrokerMessageEncoder.job(
                into: &list, to: bytes("w"), version: version, jobID: Self.jobID, intentType: bytes("Echo"),
                phase: .resolve, timeLeftMilliseconds: 2500, body: .body(Self.body), idempotencyKey: nil, attempt: 1,
                lastPhase: .confirm, traceContext: Self.trace)
        }
        for version: UInt8 in [5, 6] {
            BrokerMessageEncoder.job(
                into: &list, to: bytes("w"), version: version, jobID: Self.jobID, intentType: bytes("Echo"),
                phase: .resolve, timeLeftMilliseconds: 2500, body: .body(Self.body), idempotencyKey: bytes("k"),
                attempt: 2, lastPhase: .confirm)
        }
        let common: [[UInt8]] = [
            bytes("JOB"), Self.jobIDBytes, bytes("Echo"), bytes("resolve"), bytes("2500"), Self.body,
        ]
        #expect(
            list.messages == [
                [bytes("w"), bytes("CIPW01")] + common,
                [bytes("w"), bytes("CIPW02")] + common + [[], bytes("1")],
                [bytes("w"), bytes("CIPW03")] + common + [[], bytes("1"), bytes("confirm")],
                [bytes("w"), bytes("CIPW04")] + common + [[], bytes("1"), bytes("confirm")],
                [bytes("w"), bytes("CIPW05")] + common
                    + [[], bytes("1"), bytes("confirm"), bytes(Self.traceparent), bytes("congo=t61rcWkgMzE")],
                [bytes("w"), bytes("CIPW06"), bytes("JOB"), Self.packedHeader(trace: true), Self.body],
                [bytes("w"), bytes("CIPW05")] + common + [bytes("k"), bytes("2"), bytes("confirm")],
                [bytes("w"), bytes("CIPW06"), bytes("JOB"), Self.packedHeader(key: "k", attempt: 2), Self.body],
            ])
        // CIPW04's JOB: the routing id and 10 frames; CIPW05's: 12 with a trace context, 10 without (an untraced job
        // costs no more frames than in CIPW04).
        #expect(list.messages[3].count == 11)
        #expect(list.messages[4].count == 13)
        #expect(list.messages[6].count == 11)
        // CIPW06's: 4 frames, whatever the job carries (section 5.17).
        #expect(list.messages[5].count == 5 && list.messages[7].count == 5)
    }

    /// Section 5.17's header of an Echo resolve job up to confirm with 2,500 ms left, written out byte by byte.
    static func packedHeader(key: String = "", attempt: UInt8 = 1, trace: Bool = false) -> [UInt8] {
        var header = jobIDBytes + [0, 1] + [0xC4, 0x09, 0, 0, 0, 0, 0, 0] + [attempt, 0, 0, 0]
        header += [4] + bytes("Echo") + [UInt8(key.utf8.count)] + bytes(key)
        if trace { header += [55, 0] + bytes(traceparent) + [17, 0] + bytes("congo=t61rcWkgMzE") }
        return header
    }

    /// Fuzz regression (`Fuzz/corpus/JobFrames/regression-w06-time-left-past-int-max`): a time left past the
    /// largest Int is a usable job, its time left that largest Int.
    @Test func aPackedTimeLeftPastTheLargestIntIsClamped() throws {
        var header = Self.packedHeader()
        header.replaceSubrange(10..<18, with: [0, 0, 0, 0, 0, 0, 0, 0x80])
        let command = try BrokerMessageDecoder().decode([bytes("CIPW06"), bytes("JOB"), header, Self.body])
        guard case .job(let job) = command else {
            Issue.record("not a JOB: \(command)")
            return
        }
        #expect(job.timeLeftMilliseconds == Int.max)
    }

    @Test func unusablePackedJobHeadersFailTheirChecksWithTheJobIDWhenItIsThere() throws {
        let good = Self.packedHeader(key: "k", trace: true)
        func decode(_ header: [UInt8], body: [UInt8] = Self.body, extra: [[UInt8]] = []) -> BrokerMessageError? {
            do {
                _ = try BrokerMessageDecoder().decode([bytes("CIPW06"), bytes("JOB"), header, body] + extra)
                return nil
            } catch { return error }
        }
        #expect(decode(good) == nil)
        #expect(decode(Self.packedHeader()) == nil)
        func changed(_ at: Int, _ value: UInt8, in header: [UInt8] = good) -> [UInt8] {
            var header = header
            header[at] = value
            return header
        }
        let traceStart = 22 + 1 + 4 + 1 + 1
        let cases: [(String, [UInt8], [UInt8], Int)] = [
            ("shorter than the minimum", Array(good.prefix(24)), Self.body, 3),
            ("attempt 0", changed(18, 0, in: Self.packedHeader()), Self.body, 3),
            ("type past the end", changed(22, 250), Self.body, 3),
            ("key past the end", changed(27, 200), Self.body, 3),
            ("a byte left over", good + [0], Self.body, 3),
            ("a byte left over without a trace", Self.packedHeader() + [0], Self.body, 3),
            ("traceparent past the end", changed(traceStart, 0xFF), Self.body, 3),
            ("tracestate cut short", Array(good.dropLast()), Self.body, 3),
            ("a bad traceparent", changed(traceStart + 2, UInt8(ascii: "x")), Self.body, 3),
            ("phase byte 3", changed(8, 3), Self.body, 4),
            ("last phase before the phase", changed(9, 0, in: changed(8, 2)), Self.body, 4),
            ("an empty intent type", [UInt8](good.prefix(22)) + [0, 1] + bytes("k"), Self.body, 5),
            ("an intent type that is not UTF-8", changed(23, 0xFF), Self.body, 5),
            ("an empty body", good, [], 7),
        ]
        for (what, header, body, check) in cases {
            let error = try #require(decode(header, body: body), "\(what) was accepted")
            #expect(error.check == check, "\(what): \(error)")
            #expect(error.jobID == Self.jobIDBytes, "\(what): \(error)")
            #expect(error.code == .malformed)
        }
        // 3 or 5 frames: W3, answered when the header holds a job id; a header under 8 bytes is not answered.
        #expect(decode(good, extra: [[1]])?.jobID == Self.jobIDBytes)
        #expect(decode(Array(good.prefix(7)))?.jobID == nil)
        #expect(decode(Array(good.prefix(7)))?.check == 3)
        #expect(throws: BrokerMessageError.self) {
            try BrokerMessageDecoder().decode([bytes("CIPW06"), bytes("JOB"), good])
        }
    }

    @Test func brokerControlMessagesHaveTheFramesOfSections5_5_5_8_5_9_5_13And5_14() {
        var list = WireFrameList()
        BrokerMessageEncoder.heartbeat(into: &list, to: bytes("w"), version: 1)
        BrokerMessageEncoder.drain(into: &list, to: bytes("w"), version: 2)
        BrokerMessageEncoder.disconnect(into: &list, to: bytes("w"), version: 3)
        BrokerMessageEncoder.error(into: &list, to: bytes("w"), version: 4, code: .malformed, message: "bad")
        BrokerMessageEncoder.cancel(into: &list, to: bytes("w"), version: 2, jobID: Self.jobID)
        BrokerMessageEncoder.stats(into: &list, to: bytes("p"), version: 3, body: .bytes(bytes("{}")))
        #expect(
            list.messages == [
                frames("w", "CIPW01", "HEARTBEAT"), frames("w", "CIPW02", "DRAIN"), frames("w", "CIPW03", "DISCONNECT"),
                frames("w", "CIPW04", "ERROR", "malformed", "bad"),
                [bytes("w"), bytes("CIPW02"), bytes("CANCEL"), Self.jobIDBytes],
                frames("p", "CIPW03", "STATS", "{}"),
            ])
    }

    @Test func everyBrokerMessageToAWorkerDecodesToWhatWasEncoded() throws {
        for version: UInt8 in 1...6 {
            let job = WorkerJob(
                jobID: Self.jobIDBytes, intentType: "SendPayment", phase: .confirm, timeLeftMilliseconds: 0,
                bodySize: Self.body.count, idempotencyKey: version >= 2 ? bytes("key") : nil,
                attempt: version >= 2 ? 3 : 1, lastPhase: version >= 3 ? .handle : nil, version: version,
                traceContext: version >= 5 ? Self.trace : nil)
            var list = WireFrameList()
            #expect(BrokerMessageEncoder.job(into: &list, to: bytes("w"), job, body: .bytes(Self.body)))
            #expect(try BrokerMessageDecoder().decode(Array(list.frames.dropFirst())) == .job(job))

            var control = WireFrameList()
            BrokerMessageEncoder.heartbeat(into: &control, to: bytes("w"), version: version)
            BrokerMessageEncoder.drain(into: &control, to: bytes("w"), version: version)
            BrokerMessageEncoder.disconnect(into: &control, to: bytes("w"), version: version)
            BrokerMessageEncoder.error(
                into: &control, to: bytes("w"), version: version, code: .definitionMismatch, message: "refused")
            var expected: [BrokerCommand] = [
                .heartbeat, .drain, .disconnect, .error(code: "definition-mismatch", message: "refused"),
            ]
            if version >= 2 {
                BrokerMessageEncoder.cancel(into: &control, to: bytes("w"), version: version, jobID: Self.jobIDBytes)
                expected.append(.cancel(jobID: Self.jobIDBytes))
            }
            let decoded = try control.messages.map { try BrokerMessageDecoder().decode(Array($0.dropFirst())) }
            #expect(decoded == expected)

            var stats = WireFrameList()
            BrokerMessageEncoder.stats(into: &stats, to: bytes("p"), version: version, body: .bytes(bytes("{}")))
            #expect(
                BrokerMessageDecoder().statsAnswer(Array(stats.frames.dropFirst()))
                    == (version >= 2 ? bytes("{}") : nil))
        }
    }

    // MARK: Sinks

    @Test func aRefusedFirstFrameSendsNothing() {
        var sink = FullSink()
        #expect(!ClientMessageEncoder.ping(into: &sink))
        #expect(
            !ClientMessageEncoder.request(
                into: &sink, requestID: "r", intentType: "Echo", phase: .handle, deadlineMilliseconds: nil,
                body: .bytes(Self.body)))
        #expect(!BrokerReplyEncoder.pong(into: &sink, to: bytes("c")))
        #expect(
            !BrokerMessageEncoder.job(
                into: &sink, to: bytes("w"), version: 4, jobID: Self.jobID, intentType: "Echo", phase: .handle,
                timeLeftMilliseconds: 1, body: .body(Self.body)))
        #expect(!WorkerMessageEncoder.heartbeat(into: &sink, version: 1))
    }

    // MARK: Properties

    /// Random requests of both versions come back from the decoder as they went in.
    @Test func randomRequestsDecodeToWhatWasEncoded() async {
        await propertyCheck(count: 300, input: Gen.uint64()) { seed in
            var random = Seeded(seed)
            let version: UInt8 = [1, 2, 3, 4][Int(random.next() % 4)]
            let key = version >= 2 && random.next() % 3 != 0 ? random.bytes(1...255) : nil
            let request = ClientRequest(
                requestID: random.bytes(1...255), intentType: random.text(1...255),
                phase: RequestPhase.allCases[Int(random.next() % 4)],
                deadlineMilliseconds: random.next() % 2 == 0 ? nil : 10 + Int(random.next() % 59_991),
                bodySize: 1 + Int(random.next() % 300), idempotencyKey: key, version: version,
                traceContext: version >= 4 && random.next() % 3 != 0 ? random.traceContext() : nil)
            var list = WireFrameList()
            ClientMessageEncoder.request(
                into: &list, request, body: .bytes(random.bytes(request.bodySize...request.bodySize)))
            #expect((try? ClientMessageDecoder().decode(list.frames)) == .request(request))
        }
    }

    /// Random jobs of every version come back from the worker's decoder as the broker encoded them.
    @Test func randomJobsDecodeToWhatWasEncoded() async {
        await propertyCheck(count: 300, input: Gen.uint64()) { seed in
            var random = Seeded(seed)
            let version = UInt8(1 + random.next() % 6)
            let phase = RequestPhase.allCases[Int(random.next() % 3)]
            let last =
                version >= 3 ? RequestPhase.allCases[phase.order + Int(random.next() % UInt64(3 - phase.order))] : phase
            let job = WorkerJob(
                jobID: random.bytes(8...8), intentType: String(decoding: random.text(1...255), as: UTF8.self),
                phase: phase, timeLeftMilliseconds: Int(random.next() % 1_000_000),
                bodySize: 1 + Int(random.next() % 99),
                idempotencyKey: version >= 2 && random.next() % 2 == 0 ? random.bytes(1...255) : nil,
                attempt: version >= 2 ? 1 + Int(random.next() % 9) : 1, lastPhase: last, version: version,
                traceContext: version >= 5 && random.next() % 2 == 0 ? random.traceContext() : nil)
            var list = WireFrameList()
            BrokerMessageEncoder.job(
                into: &list, to: random.bytes(1...5), job, body: .body(random.bytes(job.bodySize...job.bodySize)))
            #expect((try? BrokerMessageDecoder().decode(Array(list.frames.dropFirst()))) == .job(job))
        }
    }
}

/// A reproducible byte source for the properties (SplitMix64).
struct Seeded {
    var state: UInt64
    init(_ seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    /// Random bytes, a count in `range`.
    mutating func bytes(_ range: ClosedRange<Int>) -> [UInt8] {
        let count = range.lowerBound + Int(next() % UInt64(range.count))
        return (0..<count).map { _ in UInt8(truncatingIfNeeded: next()) }
    }
    /// A random valid trace context: any flags, a tracestate or none.
    mutating func traceContext() -> TraceContext? {
        let hex = Array("0123456789abcdef".utf8)
        func digits(_ count: Int) -> String {
            // The first digit is never 0, so that no id is all zeros.
            String(decoding: (0..<count).map { hex[$0 == 0 ? 1 + Int(next() % 15) : Int(next() % 16)] }, as: UTF8.self)
        }
        let state = next() % 2 == 0 ? "" : String(decoding: text(1...64), as: UTF8.self)
        return try? TraceContext(
            traceparent: "00-\(digits(32))-\(digits(16))-\(digits(2))", tracestate: state)
    }
    /// Random ASCII letters and digits, a count in `range` (valid UTF-8).
    mutating func text(_ range: ClosedRange<Int>) -> [UInt8] {
        let alphabet = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-".utf8)
        let count = range.lowerBound + Int(next() % UInt64(range.count))
        return (0..<count).map { _ in alphabet[Int(next() % UInt64(alphabet.count))] }
    }
}
