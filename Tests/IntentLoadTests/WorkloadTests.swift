import ConciergeJSON
import IntentLoad
import IntentWire
import Testing

/// Workloads: the Echo request, weighted mixes from JSON, and picking by weight.
struct LoadWorkloadTests {
    func parsedBody(_ item: LoadWorkload.Item) throws -> JSONValue { try JSONValue.parse(item.body) }

    // MARK: Echo

    @Test func echoCarriesTextOfThePayloadSizeAndNoDelayByDefault() throws {
        let workload = LoadWorkload.echo(payloadBytes: 100)
        try #require(workload.items.count == 1)
        let item = workload.items[0]
        #expect(item.intentType == "Echo")
        #expect(item.label == "Echo")
        #expect(item.phase == .handle)
        #expect(item.weight == 1)
        let body = try parsedBody(item)
        #expect(body["intent"]?["type"] == "Echo")
        let parameters = try #require(body["intent"]?["parameters"]?.objectValue)
        #expect(parameters["text"]?.stringValue == String(repeating: "x", count: 100))
        #expect(Set(parameters.keys) == ["text"])
    }

    @Test func echoDelayAndCPUArePresentOnlyWhenPositive() throws {
        let both = try parsedBody(
            LoadWorkload.echo(payloadBytes: 3, delayMilliseconds: 300, cpuMilliseconds: 7).items[0])
        #expect(both["intent"]?["parameters"]?["delayMs"]?.intValue == 300)
        #expect(both["intent"]?["parameters"]?["cpuMs"]?.intValue == 7)
        #expect(both["intent"]?["parameters"]?["text"] == "xxx")

        let delayOnly = try parsedBody(LoadWorkload.echo(delayMilliseconds: 5).items[0])
        #expect(delayOnly["intent"]?["parameters"]?["delayMs"]?.intValue == 5)
        #expect(delayOnly["intent"]?["parameters"]?["cpuMs"] == nil)

        let zero = try parsedBody(LoadWorkload.echo(delayMilliseconds: 0, cpuMilliseconds: 0).items[0])
        #expect(zero["intent"]?["parameters"]?["delayMs"] == nil)
        #expect(zero["intent"]?["parameters"]?["cpuMs"] == nil)
    }

    @Test func echoDelaysTheRequestedPhaseWhenItIsNotHandle() throws {
        let resolve = LoadWorkload.echo(delayMilliseconds: 10, phase: .resolve).items[0]
        #expect(resolve.phase == .resolve)
        #expect(try parsedBody(resolve)["intent"]?["parameters"]?["delayPhase"] == "resolve")
        let confirm = LoadWorkload.echo(cpuMilliseconds: 1, phase: .confirm).items[0]
        #expect(try parsedBody(confirm)["intent"]?["parameters"]?["delayPhase"] == "confirm")
        // handle is the handler's default, and a lifecycle's delay happens in handle too.
        for phase in [RequestPhase.handle, .lifecycle] {
            let item = LoadWorkload.echo(delayMilliseconds: 10, phase: phase).items[0]
            #expect(item.phase == phase)
            #expect(try parsedBody(item)["intent"]?["parameters"]?["delayPhase"] == nil)
        }
        // Without a delay there is nothing to place.
        let plain = LoadWorkload.echo(phase: .resolve).items[0]
        #expect(try parsedBody(plain)["intent"]?["parameters"]?["delayPhase"] == nil)
    }

    @Test func echoWithANegativePayloadSendsEmptyText() throws {
        let body = try parsedBody(LoadWorkload.echo(payloadBytes: -5).items[0])
        #expect(body["intent"]?["parameters"]?["text"] == "")
    }

    // MARK: Mixes

    @Test func mixReadsWeightsPhasesLabelsAndIntents() throws {
        let workload = try mix(
            """
            [
              {"weight": 3, "intent": {"type": "Echo", "parameters": {"text": "a"}}},
              {"phase": "resolve", "label": "message to John",
               "intent": {"type": "SendMessage", "parameters": {"recipient": {"displayName": "John"}}}},
              {"weight": 2, "phase": "handle", "intent": {"type": "StartWorkout"}}
            ]
            """
        )
        try #require(workload.items.count == 3)
        let (echo, message, workout) = (workload.items[0], workload.items[1], workload.items[2])
        #expect(echo.label == "Echo")
        #expect(echo.intentType == "Echo")
        #expect(echo.weight == 3)
        #expect(echo.phase == .lifecycle)  // the default
        #expect(message.label == "message to John")
        #expect(message.intentType == "SendMessage")
        #expect(message.weight == 1)  // the default
        #expect(message.phase == .resolve)
        #expect(workout.phase == .handle)
        #expect(workout.weight == 2)
        // The body is the Interaction {"intent": ...} with the intent exactly as given.
        #expect(try parsedBody(echo) == ["intent": ["type": "Echo", "parameters": ["text": "a"]]])
        #expect(
            try parsedBody(message)
                == ["intent": ["type": "SendMessage", "parameters": ["recipient": ["displayName": "John"]]]]
        )
        #expect(try parsedBody(workout) == ["intent": ["type": "StartWorkout"]])
    }

    @Test func mixAcceptsAnObjectWithItems() throws {
        let workload = try mix(#"{"items": [{"intent": {"type": "Echo"}}, {"intent": {"type": "SendPayment"}}]}"#)
        #expect(workload.items.map(\.intentType) == ["Echo", "SendPayment"])
    }

    @Test func overridePhaseReplacesEveryItemsPhase() throws {
        let json = """
            [{"phase": "handle", "intent": {"type": "Echo"}}, {"intent": {"type": "SendMessage"}},
             {"phase": "confirm", "intent": {"type": "SendPayment"}}]
            """
        #expect(try mix(json, phase: .resolve).items.map(\.phase) == [.resolve, .resolve, .resolve])
        #expect(try mix(json).items.map(\.phase) == [.handle, .lifecycle, .confirm])
    }

    @Test(arguments: [
        "not json",
        "[{\"intent\": {\"type\": \"Echo\"}}",  // truncated
        "{}",  // neither an array nor {"items": [...]}
        "\"Echo\"",
        "[]",  // no requests
        "{\"items\": []}",
        "[{\"weight\": 1}]",  // no intent
        "[{\"intent\": {\"parameters\": {}}}]",  // no type
        "[{\"intent\": {\"type\": \"\"}}]",  // empty type
        "[{\"intent\": {\"type\": 5}}]",
        "[{\"intent\": \"Echo\"}]",
        "[{\"phase\": \"later\", \"intent\": {\"type\": \"Echo\"}}]",  // bad phase
        "[{\"phase\": 2, \"intent\": {\"type\": \"Echo\"}}]",
        "[{\"weight\": 0, \"intent\": {\"type\": \"Echo\"}}]",  // zero weight
        "[{\"weight\": -3, \"intent\": {\"type\": \"Echo\"}}]",
        "[{\"weight\": \"3\", \"intent\": {\"type\": \"Echo\"}}]",
        "[{\"weight\": 1.5, \"intent\": {\"type\": \"Echo\"}}]",
        "[{\"weight\": 1000001, \"intent\": {\"type\": \"Echo\"}}]",
        "[{\"intent\": {\"type\": \"Echo\"}}, {\"weight\": 0, \"intent\": {\"type\": \"Echo\"}}]",
    ])
    func badMixIsABadWorkload(json: String) {
        let error = #expect(throws: LoadError.self) { try mix(json) }
        #expect(error?.code == .badWorkload)
        #expect(error?.message.isEmpty == false)
    }

    @Test func intentTypeLongerThanTheWireAllowsIsABadWorkload() throws {
        let long = String(repeating: "T", count: CIP.maxIntentTypeLength + 1)
        let error = #expect(throws: LoadError.self) { try mix(#"[{"intent": {"type": "\#(long)"}}]"#) }
        #expect(error?.code == .badWorkload)
        let longest = String(repeating: "T", count: CIP.maxIntentTypeLength)
        #expect(try mix(#"[{"intent": {"type": "\#(longest)"}}]"#).items[0].intentType == longest)
    }

    @Test func workloadNeedsItemsWithPositiveWeights() {
        #expect(throws: LoadError.self) { try LoadWorkload(items: []) }
        let zero = LoadWorkload.Item(label: "zero", intentType: "Echo", phase: .handle, body: [], weight: 0)
        let error = #expect(throws: LoadError.self) { try LoadWorkload(items: [zero]) }
        #expect(error?.code == .badWorkload)
        #expect(error?.message.contains("zero") == true)
    }

    // MARK: Picking

    @Test func pickFollowsTheWeights() throws {
        let workload = try mix(
            """
            [{"weight": 1, "intent": {"type": "A"}}, {"weight": 3, "intent": {"type": "B"}},
             {"weight": 6, "intent": {"type": "C"}}]
            """
        )
        var generator = TestGenerator(state: 42)
        var counts = [0, 0, 0]
        let draws = 100_000
        for _ in 0..<draws { counts[workload.pick(generator.next())] += 1 }
        let shares = counts.map { Double($0) / Double(draws) }
        #expect(abs(shares[0] - 0.1) < 0.01, "\(shares)")
        #expect(abs(shares[1] - 0.3) < 0.01, "\(shares)")
        #expect(abs(shares[2] - 0.6) < 0.01, "\(shares)")
    }

    @Test func pickMapsEveryRandomNumberToAnItemByCumulativeWeight() throws {
        let workload = try mix(#"[{"weight": 2, "intent": {"type": "A"}}, {"weight": 1, "intent": {"type": "B"}}]"#)
        // Total weight 3: residues 0 and 1 are A, 2 is B.
        #expect(workload.pick(0) == 0)
        #expect(workload.pick(1) == 0)
        #expect(workload.pick(2) == 1)
        #expect(workload.pick(3) == 0)
        #expect(workload.pick(5) == 1)
        #expect((0...1).contains(workload.pick(.max)))
    }

    @Test func singleItemIsAlwaysPicked() {
        let workload = LoadWorkload.echo()
        var generator = TestGenerator(state: 7)
        for _ in 0..<1000 { #expect(workload.pick(generator.next()) == 0) }
    }
}

/// Configuration values checked before a run starts.
struct LoadConfigurationTests {
    @Test func defaultsAreValid() throws {
        try LoadConfiguration().validate()
        try LoadConfiguration(mode: .open(rate: 1000)).validate()
        try LoadConfiguration(connections: 1, duration: nil, requestCount: 1).validate()
    }

    @Test(arguments: [
        LoadConfiguration(mode: .closed(concurrency: 0)),
        LoadConfiguration(mode: .closed(concurrency: 2), connections: 3),
        LoadConfiguration(mode: .open(rate: 0)),
        LoadConfiguration(mode: .open(rate: -5)),
        LoadConfiguration(mode: .open(rate: .infinity)),
        LoadConfiguration(mode: .open(rate: .nan)),
        LoadConfiguration(mode: .open(rate: 20_000_000)),
        LoadConfiguration(mode: .open(rate: 100), connections: 0),
        LoadConfiguration(mode: .open(rate: 100), connections: 1025),
        LoadConfiguration(duration: nil, requestCount: nil),
        LoadConfiguration(duration: .zero),
        LoadConfiguration(duration: .seconds(-1)),
        LoadConfiguration(requestCount: 0),
        LoadConfiguration(deadlineMilliseconds: 9),
        LoadConfiguration(deadlineMilliseconds: 60_001),
        LoadConfiguration(maxInFlight: 0),
        LoadConfiguration(warmup: .seconds(-1)),
        LoadConfiguration(drainTimeout: .milliseconds(-1)),
    ])
    func inconsistentConfigurationIsRejectedBeforeTheRun(configuration: LoadConfiguration) {
        let error = #expect(throws: LoadError.self) { try configuration.validate() }
        #expect(error?.code == .badConfiguration)
        let runnerError = #expect(throws: LoadError.self) {
            _ = try LoadRunner(configuration: configuration, workload: .echo())
        }
        #expect(runnerError?.code == .badConfiguration)
    }

    @Test func errorDescriptionStartsWithTheStableCode() {
        let error = LoadError(code: .unreachable, message: "nobody home")
        #expect(error.description == "unreachable: nobody home")
        #expect(LoadError.Code.badWorkload.rawValue == "bad-workload")
        #expect(LoadError.Code.badConfiguration.rawValue == "bad-configuration")
        #expect(LoadError.Code.socket.rawValue == "socket")
    }
}
