import ConciergeJSON
import IntentWire
import Testing

@testable import IntentBroker

/// Conversations (`Schemas/PROTOCOL.md` section 4.11): the broker carries the intent between turns, writes each
/// answer in, counts asks, and never runs handle twice; refused turns change nothing.
@Suite struct ConversationRuleTests {
    static let john = #"{"displayName":"John"}"#
    static let appleseed = #"{"customIdentifier":"contact-john-appleseed","displayName":"John Appleseed"}"#
    static let doe = #"{"customIdentifier":"contact-john-doe","displayName":"John Doe"}"#
    static let start = #"{"intent":{"type":"SendMessage","parameters":{"recipient":\#(john),"content":"Hi"}}}"#

    /// A resolve output that asks to choose the recipient.
    static let disambiguation =
        #"{"intent":{"type":"SendMessage","parameters":{"recipient":\#(john),"content":"Hi"}},"#
        + #""resolve":{"recipient":{"kind":"disambiguation","options":[\#(appleseed),\#(doe)]},"#
        + #""content":{"kind":"success","value":"Hi"}}}"#

    static func output(recipient: String, confirm: String? = nil, handle: String? = nil) -> String {
        var body =
            #"{"intent":{"type":"SendMessage","parameters":{"recipient":\#(recipient),"content":"Hi"}},"#
            + #""resolve":{"recipient":{"kind":"success","value":\#(recipient)},"content":{"kind":"success","value":"Hi"}}"#
        if let confirm { body += #","confirm":{"code":"\#(confirm)"}"# }
        if let handle { body += #","handle":{"code":"\#(handle)","userActivity":{"activityType":"x","userInfo":{}}}"# }
        return body + "}"
    }

    /// A resolve output that says the recipient cannot be used (asked again).
    static let unsupported =
        #"{"intent":{"type":"SendMessage","parameters":{"recipient":{"displayName":"Nobody"},"content":"Hi"}},"#
        + #""resolve":{"recipient":{"kind":"unsupported","reason":"noContactFound"},"#
        + #""content":{"kind":"success","value":"Hi"}}}"#

    static func json(_ text: String) -> JSONValue { (try? JSONValue.parse(text)) ?? .null }

    static func harness(journaling: Bool = false) throws -> CoreHarness {
        var harness = try CoreHarness(journaling: journaling)
        harness.register("w1", capacity: 4, types: ["SendMessage"], version: 2)
        return harness
    }

    /// A harness whose broker writes transcripts (to the harness, not to files).
    static func recordingHarness() throws -> CoreHarness {
        var configuration = BrokerConfiguration()
        configuration.transcriptDirectory = "/unused"
        var harness = try CoreHarness(configuration)
        harness.register("w1", capacity: 4, types: ["SendMessage"])
        return harness
    }

    /// The conversation object of a reply's body.
    static func conversation(_ reply: CoreHarness.Reply?) -> JSONValue? {
        guard let reply else { return nil }
        let body = json(reply.body)
        return reply.command == .conversation ? body : body["conversation"]
    }

    @Test func aTwoTurnDisambiguationAndAConfirmationRunBySendingOnlyTheAnswers() throws {
        var harness = try Self.harness()
        harness.turn("r1", conversation: "c1", number: 1, body: Self.start, flags: [.confirm])
        #expect(harness.delivered.map(\.phase) == [.resolve])
        harness.answer("w1", outcome: .stop, body: Self.disambiguation)
        let first = try #require(harness.endings(of: "r1").first)
        #expect(first.status == .final && first.phase == "resolve")
        #expect(Self.conversation(first)?["state"] == "asking")
        #expect(Self.conversation(first)?["asking"]?[0]?["options"]?.arrayValue?.count == 2)

        // Turn 2: only the choice. The resolve job gets the intent with option 1 written in.
        harness.turn("r2", conversation: "c1", number: 2, body: #"{"parameter":"recipient","option":1}"#)
        let job = try #require(harness.jobs["w1"]?.last)
        #expect(
            Self.json(String(decoding: job.body, as: UTF8.self))["intent"]?["parameters"]?["recipient"]
                == Self.json(Self.doe))
        #expect(job.phase == .resolve)
        harness.answer("w1", outcome: .continue, body: Self.output(recipient: Self.doe))
        #expect(harness.delivered.map(\.phase) == [.resolve, .resolve, .confirm])
        harness.answer("w1", outcome: .continue, body: Self.output(recipient: Self.doe, confirm: "ready"))
        // A ready confirm waits for the caller (flag `confirm`): no handle job yet.
        let second = try #require(harness.endings(of: "r2").first)
        #expect(second.status == .final && second.phase == "confirm")
        #expect(Self.conversation(second)?["state"] == "confirming")
        #expect(!harness.delivered.contains { $0.phase == .handle })

        harness.turn("r3", conversation: "c1", number: 3, body: #"{"confirm":true}"#)
        let handle = try #require(harness.jobs["w1"]?.last)
        #expect(handle.phase == .handle)
        #expect(Self.json(String(decoding: handle.body, as: UTF8.self))["confirm"]?["code"] == "ready")
        harness.answer(
            "w1", outcome: .stop, body: Self.output(recipient: Self.doe, confirm: "ready", handle: "success"))
        let last = try #require(harness.endings(of: "r3").first)
        #expect(last.status == .final && last.phase == "handle")
        #expect(Self.conversation(last)?["state"] == "ended" && Self.conversation(last)?["ending"] == "completed")
        #expect(harness.core.statistics.conversationsStarted == 1 && harness.core.statistics.conversationsEnded == 1)
    }

    @Test func aParameterAskedAFourthTimeEndsTheConversation() throws {
        var harness = try Self.harness()
        harness.turn("r1", conversation: "c1", number: 1, body: Self.start)
        harness.answer("w1", outcome: .stop, body: Self.unsupported)
        for turn in 2...4 {
            harness.turn(
                "r\(turn)", conversation: "c1", number: turn,
                body: #"{"parameter":"recipient","value":{"displayName":"Nobody"}}"#)
            harness.answer("w1", outcome: .stop, body: Self.unsupported)
        }
        for turn in 1...3 {
            #expect(harness.endings(of: "r\(turn)").first?.status == .final, "turn \(turn) asks again")
        }
        let fourth = try #require(harness.endings(of: "r4").first)
        #expect(fourth.code == "too-many-asks")
        #expect(Self.json(fourth.body)["parameter"] == "recipient" && Self.json(fourth.body)["intent"] == "SendMessage")
        let state = Self.conversation(harness.readConversation("c1"))
        #expect(state?["ending"] == "too-many-asks" && state?["endingParameter"] == "recipient")
        harness.turn("r5", conversation: "c1", number: 5, body: #"{"parameter":"recipient","value":"x"}"#)
        #expect(harness.endings(of: "r5").first?.code == "conversation-ended")
    }

    @Test func theDefinitionsMaxAsksBoundsItInsteadOfTheBrokers() throws {
        var harness = try CoreHarness()
        let definition =
            #"{"intent":"SendMessage","maxAsks":1,"description":"","parameters":[],"enums":{},"confirmCodes":["ready","failure","failureRequiringAppLaunch"],"handleCodes":["success","inProgress","continueInApp","failure","failureRequiringAppLaunch"]}"#
        let announced = try AnnouncedDefinition(frame: Array(definition.utf8), intentType: "SendMessage")
        let ready = WorkerReady(
            capacity: 2, name: Array("w1".utf8), intentTypes: [Array("SendMessage".utf8)], version: 4,
            definitions: [announced])
        harness.core.workerMessage(.ready(ready), from: Array("w1".utf8), resultBody: nil, now: harness.now)
        harness.settle()
        harness.turn("r1", conversation: "c1", number: 1, body: Self.start)
        harness.answer("w1", outcome: .stop, body: Self.unsupported)
        harness.turn(
            "r2", conversation: "c1", number: 2, body: #"{"parameter":"recipient","value":{"displayName":"Nobody"}}"#)
        harness.answer("w1", outcome: .stop, body: Self.unsupported)
        #expect(harness.endings(of: "r2").first?.code == "too-many-asks")
    }

    /// An `option` that is an integer from 0 (however large, however written) but not an index of the options is
    /// `bad-option`; one that is negative, fractional or not a number is not an Answer (`bad-answer`).
    @Test func anOptionOutsideTheOptionsIsBadOptionHoweverLargeAndNegativeOrFractionalOnesAreBadAnswers() throws {
        var harness = try Self.harness()
        harness.turn("r1", conversation: "c1", number: 1, body: Self.start)
        harness.answer("w1", outcome: .stop, body: Self.disambiguation)
        let cases: [(option: String, code: String)] = [
            ("2", "bad-option"), ("100", "bad-option"), ("2147483647", "bad-option"),
            ("2147483648", "bad-option"),  // 2^31
            ("9007199254740992", "bad-option"),  // 2^53
            ("9223372036854775807", "bad-option"),  // Int64.max
            ("9223372036854775808", "bad-option"),  // 2^63: beyond Int64, parsed as a double
            ("1e30", "bad-option"), ("2.0", "bad-option"), ("1E+3", "bad-option"),
            ("-1", "bad-answer"), ("-2147483649", "bad-answer"), ("-1e30", "bad-answer"), ("1.5", "bad-answer"),
            ("0.5", "bad-answer"), ("1e-3", "bad-answer"), (#""0""#, "bad-answer"), ("null", "bad-answer"),
            ("true", "bad-answer"), ("[0]", "bad-answer"),
        ]
        for (index, test) in cases.enumerated() {
            harness.turn(
                "x\(index)", conversation: "c1", number: 2,
                body: #"{"parameter":"recipient","option":\#(test.option)}"#)
            let ending = harness.endings(of: "x\(index)").first
            #expect(ending?.code == test.code, "option \(test.option): \(ending?.body ?? "no reply")")
        }
        #expect(harness.endings(of: "x3").first?.body.contains("not option 2147483648") == true)
        #expect(harness.endings(of: "x7").first?.body.contains("not an option of 2^63 or more") == true)
        #expect(harness.delivered.count == 1, "no refused answer ran a job")
        // An integral number written with a fraction or an exponent is that index.
        harness.turn("r2", conversation: "c1", number: 2, body: #"{"parameter":"recipient","option":1.0}"#)
        let job = try #require(harness.jobs["w1"]?.last)
        #expect(
            Self.json(String(decoding: job.body, as: UTF8.self))["intent"]?["parameters"]?["recipient"]
                == Self.json(Self.doe))
    }

    /// The parser alone: what each `option` value becomes.
    @Test func theAnswerParserReadsEveryIntegerFromZeroAsAnOptionIndex() throws {
        func parse(_ option: String) -> ConversationAnswer? {
            try? ConversationAnswer.parse(Array(#"{"parameter":"p","option":\#(option)}"#.utf8)).first
        }
        #expect(parse("0") == .option(parameter: "p", index: 0))
        #expect(parse("2147483648") == .option(parameter: "p", index: 2_147_483_648))
        #expect(parse("9007199254740993") == .option(parameter: "p", index: 9_007_199_254_740_993))
        #expect(parse("9223372036854775807") == .option(parameter: "p", index: Int.max))
        #expect(parse("9223372036854775808") == .option(parameter: "p", index: nil))
        #expect(parse("1e30") == .option(parameter: "p", index: nil))
        #expect(parse("3.0") == .option(parameter: "p", index: 3))
        #expect(parse("-0") == .option(parameter: "p", index: 0))
        for option in ["-1", "-1.0", "1.5", "1e-3", #""1""#, "null", "{}"] {
            #expect(throws: ConversationRefusal.self, "\(option)") {
                try ConversationAnswer.parse(Array(#"{"parameter":"p","option":\#(option)}"#.utf8))
            }
        }
    }

    /// `asking` lists the parameters in the served definition's order, not in the resolve output's (a worker
    /// serializes it with sorted keys), so a client that asks one question after another asks as the definition
    /// reads: here `recipient` before `content`.
    @Test func askingFollowsTheServedDefinitionsParameterOrder() throws {
        var harness = try CoreHarness()
        let definition =
            #"{"intent":"SendMessage","description":"","parameters":[{"name":"recipient","type":"person"},"#
            + #"{"name":"content","type":"string"},{"name":"attachments","type":"string","list":true}],"enums":{},"#
            + #""confirmCodes":["ready","failure","failureRequiringAppLaunch"],"#
            + #""handleCodes":["success","inProgress","continueInApp","failure","failureRequiringAppLaunch"]}"#
        let announced = try AnnouncedDefinition(frame: Array(definition.utf8), intentType: "SendMessage")
        let ready = WorkerReady(
            capacity: 2, name: Array("w1".utf8), intentTypes: [Array("SendMessage".utf8)], version: 4,
            definitions: [announced])
        harness.core.workerMessage(.ready(ready), from: Array("w1".utf8), resultBody: nil, now: harness.now)
        harness.settle()
        harness.turn(
            "r1", conversation: "c1", number: 1, body: #"{"intent":{"type":"SendMessage","parameters":{}}}"#)
        // The output as a worker writes it: keys sorted.
        harness.answer(
            "w1", outcome: .stop,
            body: #"{"intent":{"parameters":{},"type":"SendMessage"},"resolve":{"attachments":{"kind":"unsupported"},"#
                + #""content":{"kind":"needsValue"},"recipient":{"kind":"needsValue"},"zeta":{"kind":"needsValue"}}}"#)
        let asking = Self.conversation(harness.endings(of: "r1").first)?["asking"]?.arrayValue ?? []
        // A parameter the definition does not declare comes last.
        #expect(asking.map { $0["parameter"]?.stringValue ?? "" } == ["recipient", "content", "attachments", "zeta"])
        #expect(
            Conversation.askedParameters(
                inResolve: Self.json(#"{"b":{"kind":"needsValue"},"a":{"kind":"needsValue"}}"#).objectValue ?? [:]
            ).map(\.parameter) == ["b", "a"], "without a definition: the output's order")
    }

    @Test func refusedAnswersLeaveTheConversationAsItWas() throws {
        var harness = try Self.harness()
        harness.turn("r1", conversation: "c1", number: 1, body: Self.start)
        harness.answer("w1", outcome: .stop, body: Self.disambiguation)
        let before = try #require(Self.conversation(harness.readConversation("c1")))
        let refusals: [(body: String, turn: Int, conversation: String, client: String, code: String)] = [
            (#"{"parameter":"content","value":"x"}"#, 2, "c1", "c1", "not-asked"),
            (#"{"parameter":"recipient","option":2}"#, 2, "c1", "c1", "bad-option"),
            (#"{"parameter":"recipient","option":-1}"#, 2, "c1", "c1", "bad-answer"),
            (#"{"parameter":"recipient"}"#, 2, "c1", "c1", "bad-answer"),
            ("not json", 2, "c1", "c1", "bad-answer"),
            (#"{"confirm":true}"#, 2, "c1", "c1", "not-asked"),
            (#"{"parameter":"recipient","confirm":true}"#, 2, "c1", "c1", "not-asked"),
            (#"{"parameter":"recipient","option":0}"#, 3, "c1", "c1", "turn-mismatch"),
            (#"{"parameter":"recipient","option":0}"#, 2, "nope", "c1", "unknown-conversation"),
            (#"{"parameter":"recipient","option":0}"#, 2, "c1", "c2", "unknown-conversation"),  // another client's
        ]
        for (index, refusal) in refusals.enumerated() {
            harness.turn(
                "x\(index)", conversation: refusal.conversation, number: refusal.turn, body: refusal.body,
                client: refusal.client)
            #expect(
                harness.endings(of: "x\(index)", client: refusal.client).first?.code == refusal.code, "\(refusal.body)")
        }
        #expect(harness.delivered.count == 1, "no refused answer ran a job")
        var after = try #require(Self.conversation(harness.readConversation("c1")))
        #expect(
            after["turn"] == before["turn"] && after["asking"] == before["asking"]
                && after["intent"] == before["intent"])
        #expect(harness.readConversation("c1", client: "c2")?.code == "unknown-conversation")
        // And the right answer still works.
        harness.turn("r2", conversation: "c1", number: 2, body: #"{"parameter":"recipient","option":0}"#)
        #expect(harness.delivered.count == 2)
        after = try #require(Self.conversation(harness.readConversation("c1")))
        #expect(after["state"] == "running")
    }

    /// PROTOCOL.md 4.11.4, `asking`: what a conversation asks comes from the latest resolve output alone; a parameter
    /// that output does not mention is not asked any more, whatever an earlier turn's output said.
    @Test func aParameterTheLatestResolveOutputLeavesOutIsNotAsked() throws {
        var harness = try Self.harness()
        harness.turn("r1", conversation: "c1", number: 1, body: Self.start)
        let both =
            #"{"intent":{"type":"SendMessage","parameters":{"recipient":\#(Self.john)}},"#
            + #""resolve":{"recipient":{"kind":"disambiguation","options":[\#(Self.appleseed),\#(Self.doe)]},"#
            + #""content":{"kind":"needsValue"}}}"#
        harness.answer("w1", outcome: .stop, body: both)
        let first = try #require(Self.conversation(harness.readConversation("c1")))
        #expect(first["asking"]?.arrayValue?.compactMap { $0["parameter"]?.stringValue } == ["recipient", "content"])
        harness.turn("r2", conversation: "c1", number: 2, body: #"{"parameter":"recipient","option":0}"#)
        // This output asks about the recipient only; content is not in it.
        let recipientOnly =
            #"{"intent":{"type":"SendMessage","parameters":{"recipient":\#(Self.appleseed)}},"#
            + #""resolve":{"recipient":{"kind":"confirmationRequired","value":\#(Self.appleseed)}}}"#
        harness.answer("w1", outcome: .stop, body: recipientOnly)
        let second = try #require(Self.conversation(harness.readConversation("c1")))
        #expect(second["asking"]?.arrayValue?.compactMap { $0["parameter"]?.stringValue } == ["recipient"])
        harness.turn("r3", conversation: "c1", number: 3, body: #"{"parameter":"content","value":"Hi"}"#)
        #expect(harness.endings(of: "r3").first?.code == "not-asked")
    }

    /// PROTOCOL.md 4.8: an attached TURN whose request id is in flight is `duplicate-request`, F4 empty, no
    /// `"conversation"`; the turn in flight goes on.
    @Test func anAttachedTurnWithARequestIdInFlightIsADuplicateRequestWithEmptyF4() throws {
        var harness = try Self.harness()
        harness.turn("r1", conversation: "c1", number: 1, body: Self.start)
        harness.turn("r1", conversation: "c1", number: 1, body: Self.start)
        let refused = try #require(harness.endings(of: "r1").first)
        #expect(refused.code == "duplicate-request" && refused.phase == "")
        #expect(Self.json(refused.body)["conversation"] == nil)
        harness.answer("w1", outcome: .stop, body: Self.disambiguation)
        #expect(Self.conversation(harness.readConversation("c1"))?["state"] == "asking")
    }

    /// PROTOCOL.md 4.11.5: a `turn-mismatch` says which turn fits in its `"conversation"` (`turn` and `state`).
    @Test func aTurnMismatchCarriesTheConversationThatSaysWhichTurnFits() throws {
        var harness = try Self.harness()
        harness.turn("r1", conversation: "c1", number: 1, body: Self.start)
        harness.answer("w1", outcome: .stop, body: Self.disambiguation)
        let answer = #"{"parameter":"recipient","option":0}"#
        harness.turn("r3", conversation: "c1", number: 3, body: answer)
        let asking = try #require(harness.endings(of: "r3").first)
        #expect(asking.code == "turn-mismatch")
        let waiting = try #require(Self.conversation(asking))
        #expect(waiting["turn"] == 1 && waiting["state"] == "asking")  // turn 2 runs
        harness.turn("r2", conversation: "c1", number: 2, body: answer)
        harness.turn("r4", conversation: "c1", number: 4, body: answer)
        let running = try #require(Self.conversation(harness.endings(of: "r4").first))
        #expect(harness.endings(of: "r4").first?.code == "turn-mismatch")
        #expect(running["turn"] == 2 && running["state"] == "running")  // turn 2 is in flight
    }

    @Test func withCurveAConversationBelongsToTheClientsKeyNotItsConnection() throws {
        var harness = try Self.harness()
        harness.turn("r1", conversation: "c1", number: 1, body: Self.start, client: "conn-1", identity: "key-A")
        harness.answer("w1", outcome: .stop, body: Self.disambiguation)
        // Another key, even on the same connection id, does not find it.
        #expect(harness.readConversation("c1", client: "conn-1", identity: "key-B")?.code == "unknown-conversation")
        harness.turn(
            "r2", conversation: "c1", number: 2, body: #"{"parameter":"recipient","option":0}"#, client: "conn-2",
            identity: "key-B")
        #expect(harness.endings(of: "r2", client: "conn-2").first?.code == "unknown-conversation")
        // The same key on a new connection (a reconnect) goes on with it.
        harness.turn(
            "r3", conversation: "c1", number: 2, body: #"{"parameter":"recipient","option":0}"#, client: "conn-3",
            identity: "key-A")
        #expect(harness.delivered.count == 2)
        #expect(Self.conversation(harness.readConversation("c1", client: "conn-3", identity: "key-A"))?["turn"] == 2)
    }

    @Test func aWorkerErrorBeforeHandleLeavesTheConversationAsItWas() throws {
        var harness = try Self.harness()
        harness.turn("r1", conversation: "c1", number: 1, body: Self.start)
        harness.answer("w1", outcome: .stop, body: Self.disambiguation)
        harness.turn("r2", conversation: "c1", number: 2, body: #"{"parameter":"recipient","value":42}"#)
        harness.answer(
            "w1", outcome: .error,
            body:
                #"{"code":"invalid-type","message":"recipient must be a person","intent":"SendMessage","parameter":"recipient"}"#
        )
        #expect(harness.endings(of: "r2").first?.code == "invalid-type")
        let state = Self.conversation(harness.readConversation("c1"))
        #expect(state?["turn"] == 1 && state?["state"] == "asking")
        harness.turn("r3", conversation: "c1", number: 2, body: #"{"parameter":"recipient","option":0}"#)
        #expect(harness.delivered.count == 3, "turn 2 runs again")
        // A first turn that fails before handle leaves no conversation.
        harness.turn("s1", conversation: "c2", number: 1, body: Self.start)
        harness.answer("w1", request: "s1", outcome: .error, body: #"{"code":"bad-body","message":"no"}"#)
        #expect(harness.readConversation("c2")?.code == "unknown-conversation")
    }

    @Test func turn1AgainIsTheSameFirstTurnOrAnIdempotencyConflict() throws {
        // Section 4.11.5: the same body and flags are attached or replayed; another body or other flags are
        // refused `idempotency-conflict` with the conversation, in every state, after a restart too.
        var harness = try Self.harness(journaling: true)
        let other = #"{"intent":{"type":"SendMessage","parameters":{"recipient":\#(Self.john),"content":"Bye"}}}"#
        harness.turn("r1", conversation: "c1", number: 1, body: Self.start)
        harness.turn("r1-other", conversation: "c1", number: 1, body: other)
        harness.turn("r1-flags", conversation: "c1", number: 1, body: Self.start, flags: [.confirm])
        for id in ["r1-other", "r1-flags"] {
            let refused = try #require(harness.endings(of: id).first, "\(id) is answered at once")
            #expect(refused.code == "idempotency-conflict" && !refused.isReplay, "\(refused)")
            #expect(Self.conversation(refused)?["turn"] == 1 && Self.conversation(refused)?["state"] == "running")
        }
        harness.turn("r1-same", conversation: "c1", number: 1, body: Self.start)
        #expect(harness.endings(of: "r1-same").isEmpty, "attached to turn 1 while it runs")
        #expect(harness.delivered.count == 1)
        harness.answer("w1", outcome: .stop, body: Self.disambiguation)
        let first = try #require(harness.endings(of: "r1").first)
        #expect(harness.endings(of: "r1-same").first?.body == first.body)

        harness.turn("r1-again", conversation: "c1", number: 1, body: Self.start)
        let replayed = try #require(harness.endings(of: "r1-again").first)
        #expect(replayed.isReplay && replayed.status == .final && replayed.body == first.body)
        try harness.restart()
        harness.register("w1", capacity: 4, types: ["SendMessage"], version: 2)
        harness.turn("r1-other-again", conversation: "c1", number: 1, body: other)
        #expect(harness.endings(of: "r1-other-again").first?.code == "idempotency-conflict")
        harness.turn("r1-after-restart", conversation: "c1", number: 1, body: Self.start)
        #expect(harness.endings(of: "r1-after-restart").first?.isReplay == true)
        #expect(harness.delivered.count == 1, "no turn 1 ran again")

        // After turn 2: the same turn 1 is a turn-mismatch, another one still a conflict; nothing changed.
        harness.turn("r2", conversation: "c1", number: 2, body: #"{"parameter":"recipient","option":0}"#)
        harness.answer("w1", outcome: .stop, body: Self.disambiguation)
        harness.turn("r1-late", conversation: "c1", number: 1, body: Self.start)
        harness.turn("r1-late-other", conversation: "c1", number: 1, body: other)
        #expect(harness.endings(of: "r1-late").first?.code == "turn-mismatch")
        #expect(harness.endings(of: "r1-late-other").first?.code == "idempotency-conflict")
        let state = Self.conversation(harness.readConversation("c1"))
        #expect(state?["turn"] == 2 && state?["state"] == "asking")
    }

    @Test func handleNeverRunsTwiceInsideAConversation() throws {
        var harness = try Self.harness()
        harness.turn("r1", conversation: "c1", number: 1, body: Self.start, flags: [.confirm])
        harness.answer("w1", outcome: .continue, body: Self.output(recipient: Self.appleseed))
        harness.answer("w1", outcome: .continue, body: Self.output(recipient: Self.appleseed, confirm: "ready"))
        harness.turn("r2", conversation: "c1", number: 2, body: #"{"confirm":true}"#)
        #expect(harness.delivered.filter { $0.phase == .handle }.count == 1)
        // A retry of the same turn while it runs attaches to it: no second job.
        harness.turn("r2-again", conversation: "c1", number: 2, body: #"{"confirm":true}"#)
        #expect(harness.delivered.filter { $0.phase == .handle }.count == 1)
        harness.worker("w1", sends: .disconnect)  // lost while handle ran
        #expect(harness.endings(of: "r2").first?.code == "worker-lost")
        #expect(harness.endings(of: "r2-again").first?.code == "worker-lost")
        let state = Self.conversation(harness.readConversation("c1"))
        #expect(state?["ending"] == "failed" && state?["endingCode"] == "worker-lost")
        // A retry after the ending gets the same error again, flagged as a replay; handle does not run.
        harness.register("w2", capacity: 4, types: ["SendMessage"])
        harness.turn("r2-third", conversation: "c1", number: 2, body: #"{"confirm":true}"#)
        let replayed = try #require(harness.endings(of: "r2-third").first)
        #expect(replayed.code == "worker-lost" && replayed.isReplay)
        #expect(harness.delivered.filter { $0.phase == .handle }.count == 1)
    }

    @Test func declineEndCancelAndIdleExpiry() throws {
        var harness = try Self.harness()
        harness.turn("r1", conversation: "c1", number: 1, body: Self.start, flags: [.confirm])
        harness.answer("w1", outcome: .continue, body: Self.output(recipient: Self.appleseed))
        harness.answer("w1", outcome: .continue, body: Self.output(recipient: Self.appleseed, confirm: "ready"))
        harness.turn("r2", conversation: "c1", number: 2, body: #"{"confirm":false}"#)
        #expect(Self.conversation(harness.endings(of: "r2").first)?["ending"] == "declined")
        #expect(!harness.delivered.contains { $0.phase == .handle })

        harness.turn("s1", conversation: "c2", number: 1, body: Self.start)
        #expect(Self.conversation(harness.endConversation("c2"))?["ending"] == "cancelled")
        #expect(harness.cancels(to: "w1").count == 1)  // its turn in flight is cancelled on the worker
        harness.answer("w1", request: "s1", outcome: .cancelled, body: #"{"code":"cancelled","message":"stopped"}"#)
        #expect(harness.endings(of: "s1").first?.code == "cancelled")
        // A retry of the cancelled turn is told how it ended.
        harness.turn("s1-again", conversation: "c2", number: 1, body: Self.start)
        let retried = try #require(harness.endings(of: "s1-again").first)
        #expect(retried.code == "cancelled" && retried.isReplay)
        // END during turn 1 (before handle) leaves the conversation, ended (PROTOCOL.md 4.11.5): it is read back.
        #expect(Self.conversation(harness.readConversation("c2"))?["ending"] == "cancelled")

        harness.turn("t1", conversation: "c3", number: 1, body: Self.start)
        harness.answer("w1", request: "t1", outcome: .stop, body: Self.disambiguation)
        harness.advance(ms: 299_000)
        #expect(Self.conversation(harness.readConversation("c3"))?["state"] == "asking")
        harness.advance(ms: 2_000)
        #expect(Self.conversation(harness.readConversation("c3"))?["ending"] == "expired")
    }

    /// PROTOCOL.md 6.4, "Units and when expiry takes effect": an idle conversation expires at the broker's first
    /// heartbeat at or after its time to live, not when it is read; until then it is answered as it stands.
    @Test func anIdleConversationExpiresAtTheFirstHeartbeatAfterItsTimeToLive() throws {
        var harness = try Self.harness()
        harness.turn("t1", conversation: "c1", number: 1, body: Self.start)
        harness.answer("w1", request: "t1", outcome: .stop, body: Self.disambiguation)
        // Past the time to live (300 s) with no turn of the loop: a read finds it as it was.
        harness.now += 301 * 1_000_000_000
        #expect(Self.conversation(harness.readConversation("c1"))?["state"] == "asking")
        // The next turn of the loop runs the heartbeat that is due, which ends it.
        harness.advance(ms: 1)
        #expect(Self.conversation(harness.readConversation("c1"))?["ending"] == "expired")
    }

    @Test func aConversationSurvivesARestartAndHandleStaysAtMostOnce() throws {
        var harness = try Self.harness(journaling: true)
        harness.turn("r1", conversation: "c1", number: 1, body: Self.start, flags: [.confirm])
        harness.answer("w1", outcome: .stop, body: Self.disambiguation)
        try harness.restart()
        harness.register("w1", capacity: 4, types: ["SendMessage"])
        harness.turn("r2", conversation: "c1", number: 2, body: #"{"parameter":"recipient","option":0}"#)
        harness.answer("w1", outcome: .continue, body: Self.output(recipient: Self.appleseed))
        harness.answer("w1", outcome: .continue, body: Self.output(recipient: Self.appleseed, confirm: "ready"))
        #expect(Self.conversation(harness.endings(of: "r2").first)?["state"] == "confirming")
        harness.turn("r3", conversation: "c1", number: 3, body: #"{"confirm":true}"#)
        #expect(harness.jobs["w1"]?.last?.phase == .handle)
        try harness.restart()  // while handle runs
        #expect(harness.endings(of: "r3").first?.code == "outcome-unknown")
        harness.register("w1", capacity: 4, types: ["SendMessage"])
        harness.turn("r3-again", conversation: "c1", number: 3, body: #"{"confirm":true}"#)
        #expect(harness.endings(of: "r3-again").first?.code == "outcome-unknown")
        #expect(harness.delivered.filter { $0.phase == .handle }.count == 1)
        #expect(Self.conversation(harness.readConversation("c1"))?["ending"] == "failed")
    }

    @Test func aLifecycleWhoseHandleRanWhenTheBrokerDiedEndsOutcomeUnknownInItsHandlePhase() throws {
        var harness = try Self.harness(journaling: true)
        harness.send("r1", type: "SendMessage", phase: .lifecycle, body: Self.start)
        harness.answer("w1", outcome: .continue, body: Self.output(recipient: Self.appleseed))
        harness.answer("w1", outcome: .continue, body: Self.output(recipient: Self.appleseed, confirm: "ready"))
        #expect(harness.jobs["w1"]?.last?.phase == .handle)
        try harness.restart()
        let ending = try #require(harness.endings(of: "r1").first)
        #expect(ending.code == "outcome-unknown" && ending.phase == "handle", "\(ending)")
    }

    @Test func recordedConversationsWriteEveryTurnPhaseAndReply() throws {
        var harness = try Self.recordingHarness()
        harness.turn("r1", conversation: "c1", number: 1, body: Self.start, flags: [.record])
        harness.answer("w1", outcome: .stop, body: Self.disambiguation)
        harness.turn("r2", conversation: "c1", number: 2, body: #"{"parameter":"recipient","option":0}"#)
        harness.answer("w1", outcome: .continue, body: Self.output(recipient: Self.appleseed))
        harness.answer("w1", outcome: .continue, body: Self.output(recipient: Self.appleseed, confirm: "ready"))
        harness.answer(
            "w1", outcome: .stop, body: Self.output(recipient: Self.appleseed, confirm: "ready", handle: "success"))
        let records = harness.transcript.map { $0.line["record"]?.stringValue ?? "?" }
        #expect(records == ["start", "turn", "phase", "reply", "turn", "phase", "phase", "phase", "reply", "end"])
        #expect(harness.transcript.first?.step == .begin && harness.transcript.last?.step == .finish)
        let phase = try #require(harness.transcript.first { $0.line["record"] == "phase" }?.line)
        #expect(phase["input"]?["intent"]?["type"] == "SendMessage" && phase["output"]?["resolve"] != nil)
        // Without the flag nothing is recorded.
        harness.turn("s1", conversation: "c2", number: 1, body: Self.start)
        #expect(!harness.transcript.contains { $0.conversation == "c2" })
    }

    /// Docs/TRANSCRIPTS.md: a transcript holds the turns that ran; a refused turn, an attached one and a replayed one
    /// write nothing.
    @Test func refusedAttachedAndReplayedTurnsAreNotWrittenToTheTranscript() throws {
        var harness = try Self.recordingHarness()
        harness.turn("r1", conversation: "c1", number: 1, body: Self.start, flags: [.record])
        harness.turn("r1-attached", conversation: "c1", number: 1, body: Self.start, flags: [.record])
        harness.answer("w1", outcome: .stop, body: Self.disambiguation)
        let written = harness.transcript.count
        harness.turn("r1-replayed", conversation: "c1", number: 1, body: Self.start, flags: [.record])
        #expect(harness.endings(of: "r1-replayed").first?.isReplay == true)
        for (id, number, body, code) in [
            ("x1", 3, #"{"parameter":"recipient","option":0}"#, "turn-mismatch"),
            ("x2", 2, #"{"parameter":"recipient","option":9}"#, "bad-option"),
            ("x3", 2, #"{"parameter":"content","value":"x"}"#, "not-asked"),
        ] {
            harness.turn(id, conversation: "c1", number: number, body: body)
            #expect(harness.endings(of: id).first?.code == code)
        }
        #expect(harness.transcript.count == written, "\(harness.transcript.dropFirst(written).map(\.line))")
        #expect(harness.transcript.filter { $0.line["record"] == "turn" }.count == 1)
    }
}
