import ConciergeJSON
import Foundation
import IntentKit

/// A test-only intent with a parameter of every type, to exercise decoding and the job runner's rules.
struct ProbeIntent: Intent, Hashable {
    static let intentType = "Probe"
    static let parameters: [IntentParameter<ProbeIntent>] = [
        .init("text", \.text), .init("count", \.count), .init("ratio", \.ratio), .init("flag", \.flag),
        .init("when", \.when), .init("components", \.components), .init("price", \.price), .init("who", \.who),
        .init("place", \.place), .init("level", \.level), .init("tags", \.tags), .init("levels", \.levels),
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
    var level: ProbeLevel?
    var tags: [String]?
    var levels: [ProbeLevel]?
    /// Not a declared parameter: setting a resolution for it is a handler bug.
    var secret: String?
}

enum ProbeLevel: String, IntentEnum {
    case low, high
}

/// Test-only handler: `count` 13 makes resolve set an undeclared resolution, `count` 7 makes confirm answer an
/// undeclared code; handle reports the context it got.
struct ProbeHandler: IntentHandler {
    func resolve(intent: ProbeIntent, context: HandlerContext) async throws -> Resolutions<ProbeIntent> {
        var resolutions = Resolutions<ProbeIntent>()
        if intent.count == 13 { resolutions[\.secret] = .success("x") }
        return resolutions
    }

    func confirm(intent: ProbeIntent, context: HandlerContext) async throws -> ConfirmResponse<ProbeIntent> {
        intent.count == 7 ? ConfirmResponse(code: "bogusCode") : .ready
    }

    func handle(intent: ProbeIntent, context: HandlerContext) async throws -> HandleResponse<ProbeIntent> {
        HandleResponse(
            code: intent.count == 7 ? "bogusCode" : .success,
            data: [
                "phase": .string(context.phase.rawValue), "jobID": .string(context.jobID),
                "worker": .string(context.workerName),
            ]
        )
    }
}

extension HandlerProvider {
    /// A provider with only the probe handler.
    static var probe: HandlerProvider {
        var provider = HandlerProvider()
        provider.register { ProbeHandler() }
        return provider
    }
}
