public import ConciergeJSON

/// The body of the broker's answer to `CIPW02 STATS` (`Schemas/PROTOCOL.md` section 5.14,
/// `Schemas/json/stats.schema.json`): its queues and workers at one moment. The broker writes it from a snapshot; a
/// pool that scales itself reads it once a second.
public struct BrokerStats: Sendable, Equatable {
    /// A definition of an intent type that `CIPW04` workers announced (section 5.16), and which workers did.
    public struct Definition: Sendable, Equatable {
        /// `sha256:` and the digest of the definition's canonical form.
        public var digest: String
        /// The definition's `version` (1 when it has none).
        public var version: Int
        /// The names of the registered workers that announced it.
        public var workers: [String]
        /// The definition (the JSON of its definition file, section 11.11).
        public var definition: JSONValue

        public init(digest: String, version: Int, workers: [String], definition: JSONValue) {
            self.digest = digest
            self.version = version
            self.workers = workers
            self.definition = definition
        }
    }

    /// One intent type: its queue and the workers that serve it.
    public struct IntentType: Sendable, Equatable {
        public var name: String
        /// Requests waiting for a worker.
        public var queued: Int
        /// How long the request at the head of the queue has waited, in milliseconds (0 when none waits).
        public var oldestAgeMilliseconds: Int
        /// Registered workers that serve the type (draining ones included), their capacity, the jobs they hold (of
        /// any type), and the capacity that could start a job of this type now.
        public var workers: Int
        public var capacity: Int
        public var capacityUsed: Int
        public var capacityFree: Int
        /// The definitions its workers announced (none from workers older than `CIPW04`).
        public var definitions: [Definition] = []

        public init(
            name: String, queued: Int = 0, oldestAgeMilliseconds: Int = 0, workers: Int = 0, capacity: Int = 0,
            capacityUsed: Int = 0, capacityFree: Int = 0
        ) {
            self.name = name
            self.queued = queued
            self.oldestAgeMilliseconds = oldestAgeMilliseconds
            self.workers = workers
            self.capacity = capacity
            self.capacityUsed = capacityUsed
            self.capacityFree = capacityFree
        }
    }

    /// One registered worker.
    public struct Worker: Sendable, Equatable {
        /// The name it announced in READY (a pool's workers are `<prefix>-<slot>`).
        public var name: String
        public var capacity: Int
        /// Jobs sent to it and not answered yet.
        public var jobs: Int
        /// It sent DRAIN: no more jobs.
        public var draining: Bool
        /// The intent types it announced.
        public var intents: [String]

        public init(name: String, capacity: Int, jobs: Int = 0, draining: Bool = false, intents: [String] = []) {
            self.name = name
            self.capacity = capacity
            self.jobs = jobs
            self.draining = draining
            self.intents = intents
        }
    }

    /// A worker the broker refused to register (section 5.18): its definition differs under a version already
    /// served (`definition-mismatch`), or its identity may not serve its types (`forbidden`).
    public struct Refusal: Sendable, Equatable {
        /// The name it announced in READY.
        public var worker: String
        /// The intent type the refusal is about (empty when it is about the worker as a whole).
        public var intent: String
        /// The version and digest of the definition it announced for that type (0 and empty when none).
        public var version: Int
        public var digest: String
        /// The error code it was answered: `definition-mismatch` or `forbidden`.
        public var code: String
        /// Why, as the ERROR's message said.
        public var reason: String

        public init(worker: String, intent: String, version: Int, digest: String, code: String, reason: String) {
            self.worker = worker
            self.intent = intent
            self.version = version
            self.digest = digest
            self.code = code
            self.reason = reason
        }
    }

    /// What the broker is doing: `active`, `unavailable` (its journal's database is unreachable: the snapshot is
    /// empty) or `stopping`. Readers MUST take a state they do not know like `active`.
    public var state: String
    /// The broker's default first-reply deadline, in milliseconds.
    public var defaultDeadlineMilliseconds: Int
    /// Accepted requests not ended yet (queued or running), and those waiting in all queues together.
    public var requestsInFlight: Int
    public var queued: Int
    public var intentTypes: [IntentType]
    public var workers: [Worker]
    /// The workers refused most recently, oldest first (at most 20; empty from brokers before section 5.18).
    public var refused: [Refusal] = []

    public init(
        state: String = "active", defaultDeadlineMilliseconds: Int, requestsInFlight: Int = 0, queued: Int = 0,
        intentTypes: [IntentType] = [], workers: [Worker] = []
    ) {
        self.state = state
        self.defaultDeadlineMilliseconds = defaultDeadlineMilliseconds
        self.requestsInFlight = requestsInFlight
        self.queued = queued
        self.intentTypes = intentTypes
        self.workers = workers
    }

    /// The body as JSON.
    public var json: JSONValue {
        .object([
            "state": .string(state),
            "default_deadline_ms": .int(Int64(defaultDeadlineMilliseconds)),
            "requests_in_flight": .int(Int64(requestsInFlight)),
            "queued": .int(Int64(queued)),
            "intent_types": .array(
                intentTypes.map { type in
                    .object([
                        "name": .string(type.name), "queued": .int(Int64(type.queued)),
                        "oldest_age_ms": .int(Int64(type.oldestAgeMilliseconds)), "workers": .int(Int64(type.workers)),
                        "capacity": .int(Int64(type.capacity)), "capacity_used": .int(Int64(type.capacityUsed)),
                        "capacity_free": .int(Int64(type.capacityFree)),
                        "definitions": .array(
                            type.definitions.map { definition in
                                .object([
                                    "digest": .string(definition.digest),
                                    "version": .int(Int64(definition.version)),
                                    "workers": .array(definition.workers.map { .string($0) }),
                                    "definition": definition.definition,
                                ])
                            }),
                    ])
                }),
            "workers": .array(
                workers.map { worker in
                    .object([
                        "name": .string(worker.name), "capacity": .int(Int64(worker.capacity)),
                        "jobs": .int(Int64(worker.jobs)), "draining": .bool(worker.draining),
                        "intents": .array(worker.intents.map { .string($0) }),
                    ])
                }),
            "refused": .array(
                refused.map { refusal in
                    .object([
                        "worker": .string(refusal.worker), "intent": .string(refusal.intent),
                        "version": .int(Int64(refusal.version)), "digest": .string(refusal.digest),
                        "code": .string(refusal.code), "reason": .string(refusal.reason),
                    ])
                }),
        ])
    }

    /// The body's bytes (F2 of the answer).
    public func serialized() -> [UInt8] { json.serialized() }

    /// Reads a body; keys it does not know are ignored (section 9). Throws ``BrokerStatsError`` when a required key
    /// is missing or has the wrong type.
    public init(parsing bytes: [UInt8]) throws(BrokerStatsError) {
        let value: JSONValue
        do { value = try JSONValue.parse(bytes) } catch { throw BrokerStatsError(message: "not JSON: \(error)") }
        func int(_ object: JSONValue, _ key: String) throws(BrokerStatsError) -> Int {
            guard let number = object[key]?.intValue, number >= 0 else {
                throw BrokerStatsError(message: "\"\(key)\" must be a whole number of at least 0")
            }
            return number
        }
        func string(_ object: JSONValue, _ key: String) throws(BrokerStatsError) -> String {
            guard let text = object[key]?.stringValue else {
                throw BrokerStatsError(message: "\"\(key)\" must be text")
            }
            return text
        }
        guard value.objectValue != nil, let types = value["intent_types"]?.arrayValue,
            let workers = value["workers"]?.arrayValue
        else {
            throw BrokerStatsError(message: "expected an object with \"intent_types\" and \"workers\" arrays")
        }
        self.init(
            state: try string(value, "state"), defaultDeadlineMilliseconds: try int(value, "default_deadline_ms"),
            requestsInFlight: try int(value, "requests_in_flight"), queued: try int(value, "queued"))
        for type in types {
            var entry = IntentType(
                name: try string(type, "name"), queued: try int(type, "queued"),
                oldestAgeMilliseconds: try int(type, "oldest_age_ms"), workers: try int(type, "workers"),
                capacity: try int(type, "capacity"), capacityUsed: try int(type, "capacity_used"),
                capacityFree: try int(type, "capacity_free"))
            // Optional (brokers before CIPW04 do not send it).
            for definition in type["definitions"]?.arrayValue ?? [] {
                guard let body = definition["definition"], body.objectValue != nil,
                    let workers = definition["workers"]?.arrayValue
                else {
                    throw BrokerStatsError(message: "a definition needs \"definition\" (an object) and \"workers\"")
                }
                entry.definitions.append(
                    Definition(
                        digest: try string(definition, "digest"), version: try int(definition, "version"),
                        workers: workers.compactMap(\.stringValue), definition: body))
            }
            intentTypes.append(entry)
        }
        for worker in workers {
            guard let draining = worker["draining"]?.boolValue, let intents = worker["intents"]?.arrayValue else {
                throw BrokerStatsError(
                    message: "a worker needs \"draining\" (true or false) and \"intents\" (an array)")
            }
            var names: [String] = []
            for intent in intents {
                guard let name = intent.stringValue else { throw BrokerStatsError(message: "intents are text") }
                names.append(name)
            }
            self.workers.append(
                Worker(
                    name: try string(worker, "name"), capacity: try int(worker, "capacity"),
                    jobs: try int(worker, "jobs"), draining: draining, intents: names))
        }
        // Optional (brokers before section 5.18 do not send it).
        for refusal in value["refused"]?.arrayValue ?? [] {
            refused.append(
                Refusal(
                    worker: try string(refusal, "worker"), intent: try string(refusal, "intent"),
                    version: try int(refusal, "version"), digest: try string(refusal, "digest"),
                    code: try string(refusal, "code"), reason: try string(refusal, "reason")))
        }
    }
}

/// A STATS body that cannot be read.
public struct BrokerStatsError: Error, Sendable, Equatable, CustomStringConvertible {
    public let message: String
    public init(message: String) { self.message = message }
    public var description: String { message }
}
