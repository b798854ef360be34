// Fuzz target: what a worker does with a body (IntentKit, ConciergeExamples): decoding intents, loading intent
// definitions, and running whole jobs.
//
// Input: one mode byte (taken modulo 8), then:
//   0-4: the JSON of an "intent" object for RequestRide, StartWorkout, SendMessage, SendPayment, Echo.
//   5:   the JSON of an "intent" object for FuzzProbe, an intent with a parameter of every type and list.
//   6:   an intent definition file (IntentDefinition(jsonBytes:)).
//   7:   a whole job: one byte picking the intent type (RequestRide, StartWorkout, SendMessage, SendPayment,
//        FuzzProbe; Echo is left out, it sleeps and burns CPU on request), one byte picking the phase, then the
//        Interaction body, run by HandlerProvider.run as the worker runs it.
//
// Invariants: nothing traps; an intent that decodes writes JSON that decodes again to an intent writing the same JSON;
// a definition that loads writes JSON that loads again to an equal definition; a job answers `error` with a
// {"code", "message"} body ("intent" and "parameter" too for validation errors), or `continue`/`stop` with an
// object that keeps every key of the input other than "intent" and the phase's key unchanged, has "intent", and has
// the phase's key; a resolve output has one resolution per declared parameter; the outcome follows the outcome rule
// (section 5.11).

import ConciergeExamples
import ConciergeJSON
import Dispatch
import Foundation
import IntentKit

/// An intent with a parameter of every type, single and list.
struct FuzzProbe: Intent, Hashable {
    static let intentType = "FuzzProbe"
    static let parameters: [IntentParameter<FuzzProbe>] = [
        .init("text", \.text), .init("count", \.count, minimum: 1, maximum: 8), .init("ratio", \.ratio),
        .init("flag", \.flag), .init("when", \.when), .init("components", \.components), .init("price", \.price),
        .init("who", \.who), .init("place", \.place), .init("level", \.level), .init("tags", \.tags),
        .init("levels", \.levels), .init("days", \.days), .init("people", \.people), .init("prices", \.prices),
    ]
    var identifier: String?
    var text: String?
    var count: Int?
    var ratio: Double?
    var flag: Bool?
    var when: Date?
    var components: IntentDateComponents?
    var price: CurrencyAmount?
    var who: Person?
    var place: Placemark?
    var level: FuzzLevel?
    var tags: [String]?
    var levels: [FuzzLevel]?
    var days: [Date]?
    var people: [Person]?
    var prices: [CurrencyAmount]?
}

enum FuzzLevel: String, IntentEnum {
    case low, high
}

/// Resolves with every kind of result (write-backs included), confirms and handles by the input.
struct FuzzProbeHandler: IntentHandler {
    func resolve(intent: FuzzProbe, context: HandlerContext) async throws -> Resolutions<FuzzProbe> {
        var resolutions = Resolutions<FuzzProbe>()
        if let text = intent.text { resolutions[\.text] = .success(text + "!") }
        if let count = intent.count {
            resolutions[\.count] = count > 8 ? .unsupported(reason: "tooMany") : .success(count)
        }
        if let who = intent.who { resolutions[\.who] = .disambiguation([who, who]) }
        if let price = intent.price { resolutions[\.price] = .confirmationRequired(price) }
        if intent.flag == true { resolutions[\.flag] = .needsValue }
        if intent.flag == false { throw CancellationError() }
        return resolutions
    }

    func confirm(intent: FuzzProbe, context: HandlerContext) async throws -> ConfirmResponse<FuzzProbe> {
        if intent.flag == false { throw CancellationError() }
        return intent.count == 7 ? ConfirmResponse(code: "undeclared") : .ready
    }

    func handle(intent: FuzzProbe, context: HandlerContext) async throws -> HandleResponse<FuzzProbe> {
        if intent.flag == false { throw CancellationError() }
        if intent.count == 3 {
            return HandleResponse(
                code: .continueInApp, userActivity: UserActivity(activityType: "x", userInfo: ["a": 1]))
        }
        return HandleResponse(code: .success, data: ["text": intent.text.map(JSONValue.string) ?? .null])
    }
}

let provider: HandlerProvider = {
    var provider = HandlerProvider()
    provider.register { RequestRideHandler() }
    provider.register { StartWorkoutHandler() }
    provider.register { SendMessageHandler() }
    provider.register { SendPaymentHandler() }
    provider.register { FuzzProbeHandler() }
    return provider
}()
let jobTypes = ["RequestRide", "StartWorkout", "SendMessage", "SendPayment", "FuzzProbe"]
let intentTypes: [any Intent.Type] = Examples.intentTypes + [FuzzProbe.self]

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzIntentBody(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let mode = Int(data[0] % 8)
    switch mode {
    case 0...5:
        guard let json = try? JSONValue.parse(UnsafeRawBufferPointer(start: data + 1, count: size - 1)) else {
            return 0
        }
        roundTrip(intentTypes[mode], json)
    case 6:
        let bytes = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
        guard let definition = try? IntentDefinition(jsonBytes: bytes) else { return 0 }
        let written = definition.jsonValue
        let again = try? IntentDefinition(jsonValue: written)
        invariant(again == definition, "definition does not load again the same: \(written)")
    default:
        guard size >= 3 else { return 0 }
        let type = jobTypes[Int(data[1]) % jobTypes.count]
        let phase = IntentPhase.allCases[Int(data[2]) % 3]
        runJob(type: type, phase: phase, body: Array(UnsafeBufferPointer(start: data + 3, count: size - 3)))
    }
    return 0
}

func roundTrip<I: Intent>(_ type: I.Type, _ json: JSONValue) {
    guard let intent = try? I(jsonValue: json) else { return }
    let written = intent.jsonValue
    guard let again = try? I(jsonValue: written) else {
        invariant(false, "\(I.intentType): written intent does not decode: \(written)")
        return
    }
    invariant(again.jsonValue == written, "\(I.intentType): \(written) decodes to \(again.jsonValue)")
}

/// The result of an async job, handed to the fuzzing thread.
final class Outcome: @unchecked Sendable {
    var output: JobOutput?
}

func runJob(type: String, phase: IntentPhase, body: [UInt8]) {
    let semaphore = DispatchSemaphore(value: 0)
    let outcome = Outcome()
    let context = HandlerContext(jobID: "0102030405060708", workerName: "fuzz", phase: phase)
    Task {
        outcome.output = await provider.run(intentType: type, phase: phase, body: body, context: context)
        semaphore.signal()
    }
    semaphore.wait()
    guard let output = outcome.output else { return }
    guard let result = try? JSONValue.parse(output.body), case .object(let members) = result else {
        invariant(false, "job output is not a JSON object: \(String(decoding: output.body, as: UTF8.self))")
        return
    }
    if output.outcome == .error {
        // {"code", "message"}, plus "intent" and "parameter" for the validation codes (PROTOCOL.md 5.11, 10.2).
        let validation: Set<String> = ["unknown-parameter", "invalid-type", "out-of-range", "invalid-enum"]
        let code = members["code"]?.stringValue ?? ""
        invariant(
            Set(members.keys).isSubset(of: ["code", "message", "intent", "parameter"])
                && members["message"]?.stringValue != nil && !code.isEmpty,
            "error body \(result)")
        if validation.contains(code) {
            invariant(
                members["intent"]?.stringValue == type && members["parameter"]?.stringValue != nil,
                "validation error without its intent and parameter: \(result)")
        }
        return
    }
    guard case .object(let input)? = try? JSONValue.parse(body) else {
        invariant(false, "a job on a body that is not a JSON object did not fail")
        return
    }
    invariant(members["intent"]?.objectValue != nil, "output without an intent object")
    invariant(members[phase.rawValue] != nil, "output without \(phase.rawValue)")
    for (key, value) in input where key != "intent" && key != phase.rawValue {
        invariant(members[key] == value, "key \(key) not copied unchanged")
    }
    // The outcome rule and the shape of each phase's output (section 5.11).
    switch phase {
    case .resolve:
        guard case .object(let resolutions)? = members["resolve"] else {
            invariant(false, "resolve output is not an object")
            return
        }
        let declared = Set(provider.definition(of: type)?.parameters.map(\.name) ?? [])
        invariant(
            Set(resolutions.keys) == declared, "resolutions \(resolutions.keys.sorted()) for \(declared.sorted())")
        let resolved = resolutions.values.allSatisfy {
            $0["kind"] == .string("success") || $0["kind"] == .string("notRequired")
        }
        invariant(output.outcome == (resolved ? .continue : .stop), "resolve outcome \(output.outcome)")
    case .confirm:
        let ready = members["confirm"]?["code"] == .string("ready")
        invariant(output.outcome == (ready ? .continue : .stop), "confirm outcome \(output.outcome)")
    case .handle:
        invariant(output.outcome == .stop, "handle outcome \(output.outcome)")
        invariant(members["handle"]?["userActivity"]?["activityType"] != nil, "handle output without userActivity")
    case .lifecycle:
        invariant(false, "a job in phase lifecycle did not fail (the broker never sends one)")
    }
}
