import ConciergeJSON
public import IntentWire

/// What a load run sends: one or more prepared requests, each picked with a weight.
///
/// Bodies are serialized once, when the workload is made, so the run itself only copies bytes.
public struct LoadWorkload: Sendable {
    /// One kind of request.
    public struct Item: Sendable {
        /// A name for reports (the intent type unless the mix file gives a `label`).
        public var label: String
        public var intentType: String
        public var phase: RequestPhase
        /// The Interaction body: `{"intent": {...}}`.
        public var body: [UInt8]
        /// Relative weight (at least 1).
        public var weight: Int

        public init(label: String, intentType: String, phase: RequestPhase, body: [UInt8], weight: Int = 1) {
            self.label = label
            self.intentType = intentType
            self.phase = phase
            self.body = body
            self.weight = weight
        }
    }

    public let items: [Item]
    /// Running sums of the weights, for picking.
    private let cumulativeWeights: [Int]

    /// A workload of the given items (at least one, each with a weight of at least 1).
    public init(items: [Item]) throws(LoadError) {
        guard !items.isEmpty else { throw LoadError(code: .badWorkload, message: "the workload has no requests") }
        var sums: [Int] = []
        var total = 0
        for item in items {
            guard item.weight >= 1, item.weight <= 1_000_000 else {
                throw LoadError(code: .badWorkload, message: "\(item.label): weight must be 1 to 1000000")
            }
            total += item.weight
            sums.append(total)
        }
        self.items = items
        cumulativeWeights = sums
    }

    /// The item to send next, given a uniformly random number.
    public func pick(_ random: UInt64) -> Int {
        guard items.count > 1 else { return 0 }
        let target = Int(random % UInt64(totalWeight))
        // Few items: a linear scan beats a binary search.
        for (index, sum) in cumulativeWeights.enumerated() where target < sum { return index }
        return items.count - 1
    }

    var totalWeight: Int { cumulativeWeights.last ?? 1 }

    /// The Echo intent: `text` of `payloadBytes` bytes, the handler waits `delayMilliseconds` then burns
    /// `cpuMilliseconds` of CPU (both in `phase`).
    public static func echo(
        payloadBytes: Int = 250,
        delayMilliseconds: Int = 0,
        cpuMilliseconds: Int = 0,
        phase: RequestPhase = .handle
    ) -> LoadWorkload {
        var parameters: JSONObject = ["text": .string(String(repeating: "x", count: max(0, payloadBytes)))]
        if delayMilliseconds > 0 { parameters["delayMs"] = .int(Int64(delayMilliseconds)) }
        if cpuMilliseconds > 0 { parameters["cpuMs"] = .int(Int64(cpuMilliseconds)) }
        if phase != .handle, phase != .lifecycle, delayMilliseconds > 0 || cpuMilliseconds > 0 {
            parameters["delayPhase"] = .string(phase.description)
        }
        let body: JSONValue = ["intent": ["type": "Echo", "parameters": .object(parameters)]]
        // A workload of one valid item cannot fail.
        return try! LoadWorkload(items: [Item(label: "Echo", intentType: "Echo", phase: phase, body: body.serialized())]
        )
    }

    /// A weighted mix from JSON: `[{"weight": 3, "phase": "lifecycle", "label": "...", "intent": {"type": ...,
    /// "parameters": {...}}}, ...]` (or `{"items": [...]}`). `phase` (default `lifecycle`) is overridden by
    /// `overridePhase` when given.
    public static func mix(json: [UInt8], overridePhase: RequestPhase? = nil) throws(LoadError) -> LoadWorkload {
        func fail(_ message: String) -> LoadError { LoadError(code: .badWorkload, message: message) }
        let document: JSONValue
        do {
            document = try JSONValue.parse(json)
        } catch {
            throw fail("the mix is not valid JSON: \(error)")
        }
        guard let entries = document.arrayValue ?? document["items"]?.arrayValue else {
            throw fail("the mix must be an array of {weight, phase, intent} objects (or {\"items\": [...]})")
        }
        var items: [Item] = []
        for (index, entry) in entries.enumerated() {
            guard let intent = entry["intent"], let type = intent["type"]?.stringValue, !type.isEmpty,
                type.utf8.count <= CIP.maxIntentTypeLength
            else {
                throw fail("item \(index): needs \"intent\": {\"type\": ..., \"parameters\": {...}}")
            }
            var phase = RequestPhase.lifecycle
            if let name = entry["phase"] {
                guard let text = name.stringValue, let parsed = RequestPhase(text) else {
                    throw fail("item \(index): phase must be resolve, confirm, handle or lifecycle")
                }
                phase = parsed
            }
            let weight = entry["weight"].map { $0.intValue ?? -1 } ?? 1
            let label = entry["label"]?.stringValue ?? type
            let body: JSONValue = ["intent": intent]
            items.append(
                Item(
                    label: label, intentType: type, phase: overridePhase ?? phase, body: body.serialized(),
                    weight: weight)
            )
        }
        return try LoadWorkload(items: items)
    }
}
