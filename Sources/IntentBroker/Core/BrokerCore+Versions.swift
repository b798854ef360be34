import IntentWire

/// Definition versions (section 5.18): which definition a request is admitted under, and which workers may run its
/// jobs. A type with one definition served, and requests pinned to it, never pays for more than a comparison.
extension BrokerCore {
    /// The definition a request of `type` is admitted under: the version it asked for (F3 `Type@N`), else the oldest
    /// version served; nil when the type's workers announce no definition. Throws the message of the
    /// `unknown-intent` refusal when the version asked for is not served.
    func admissionPin(for type: Int, asked: Int?) -> Result<DefinitionPin?, PinRefusal> {
        let served = intentTypes[type].definitions
        guard let asked else {
            guard let oldest = served.min(by: { $0.definition.version < $1.definition.version }) else {
                return .success(nil)
            }
            return .success(DefinitionPin(version: oldest.definition.version, digest: oldest.definition.digest))
        }
        guard let match = served.first(where: { $0.definition.version == asked }) else {
            let versions = served.map { String($0.definition.version) }.sorted()
            return .failure(
                PinRefusal(
                    message: "no worker serves version \(asked) of intent type \"\(intentTypes[type].displayName)\""
                        + (versions.isEmpty
                            ? " (its workers announce no definition)"
                            : " (served: \(versions.joined(separator: ", ")))")
                ))
        }
        return .success(DefinitionPin(version: asked, digest: match.definition.digest))
    }

    /// Whether requests pinned to `pin` need a check of each worker: the type serves another definition too, or
    /// only another one.
    func pinMatters(_ pin: DefinitionPin?, type: Int) -> Bool {
        guard let pin else { return false }
        let served = intentTypes[type].definitions
        return !(served.count == 1 && served[0].definition.digest == pin.digest)
    }

    /// Whether `workerID` may run a job of a request of `type` pinned to `pin`: it serves that definition, or a later
    /// version compatible with it (``DefinitionCompatibility``), or announces none (a worker before `CIPW04`).
    mutating func canServe(_ workerID: WorkerID, type: Int, pin: DefinitionPin?) -> Bool {
        guard let pin, let digest = workers[workerID]?.definitionDigests[type] else { return true }
        if digest == pin.digest { return true }
        let key = pin.digest + ">" + digest
        if let known = intentTypes[type].compatible[key] { return known }
        var verdict = false
        if let later = intentTypes[type].known.last(where: { $0.digest == digest }), later.version > pin.version {
            if let earlier = intentTypes[type].known.last(where: { $0.digest == pin.digest }) {
                verdict = DefinitionCompatibility.isCompatible(later.json, with: earlier.json)
            } else {
                verdict = true  // forgotten (more than maxKnownDefinitions since): nothing left to compare
            }
        }
        intentTypes[type].compatible[key] = verdict
        return verdict
    }

    /// Remembers a definition a worker announced, for requests pinned to it after its workers left.
    mutating func remember(_ definition: AnnouncedDefinition, type: Int) {
        guard !intentTypes[type].known.contains(where: { $0.digest == definition.digest }) else { return }
        intentTypes[type].known.append(definition)
        if intentTypes[type].known.count > IntentTypeState.maxKnownDefinitions {
            intentTypes[type].known.removeFirst()
            intentTypes[type].compatible.removeAll()
        }
    }

    /// The first waiting request of `type` that `workerID` may run, taken from the queue; nil when there is none.
    /// The head when it may (the common case); otherwise a pass over the queue, lane by lane.
    mutating func dequeue(_ type: Int, for workerID: WorkerID) -> RequestID? {
        guard let head = intentTypes[type].queue.peekFirst() else { return nil }
        let headPin = requests[head]?.pin
        if !pinMatters(headPin, type: type) || canServe(workerID, type: type, pin: headPin) {
            return dequeue(type)
        }
        for id in intentTypes[type].queue.waiting {
            guard let request = requests[id], canServe(workerID, type: type, pin: request.pin) else { continue }
            leaveQueue(request)
            return id
        }
        return nil
    }
}

/// Why a request's asked-for definition version cannot be served (answered `unknown-intent`).
struct PinRefusal: Error {
    let message: String
}
