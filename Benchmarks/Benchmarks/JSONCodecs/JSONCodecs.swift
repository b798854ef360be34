// ConciergeJSON against Foundation's JSONSerialization and JSONDecoder/JSONEncoder, on the protocol's bodies.
//
//   cd Benchmarks && swift package --allow-writing-to-package-directory benchmark
//
// Every benchmark runs 1,000 operations per measured iteration (scalingFactor .kilo); the tool prints figures per
// operation where it marks them with `*`.

import Benchmark
import ConciergeJSON
import Foundation

/// One body in its three shapes: raw bytes (what a frame holds), Data (what Foundation takes) and a Codable model.
struct Fixture<Model: Codable>: @unchecked Sendable {
    let name: String
    let bytes: [UInt8]
    let data: Data
    let value: JSONValue
    let object: Any
    let model: Model

    init(_ name: String, _ text: String, as _: Model.Type) {
        self.name = name
        bytes = Array(text.utf8)
        data = Data(bytes)
        value = try! JSONValue.parse(bytes)
        object = try! JSONSerialization.jsonObject(with: data)
        model = try! JSONDecoder().decode(Model.self, from: data)
        // The three parsers must agree on what the body says, or the comparison means nothing.
        precondition(try! JSONValue.parse(value.serialized()) == value)
        precondition(try! JSONValue.parse(Array(JSONEncoder().encode(model))) == value)
        precondition(try! JSONValue.parse(Array(JSONSerialization.data(withJSONObject: object))) == value)
    }
}

/// 1,000 operations per iteration, up to 2 s or 1,000 iterations per benchmark.
var configuration: Benchmark.Configuration {
    .init(
        metrics: [.wallClock, .throughput, .mallocCountTotal],
        timeUnits: .nanoseconds,
        scalingFactor: .kilo,
        maxDuration: .seconds(2),
        maxIterations: 1_000
    )
}

func register<Model: Codable>(_ fixture: Fixture<Model>) {
    let size = "\(fixture.name) (\(fixture.bytes.count) B)"

    Benchmark("parse \(size): ConciergeJSON", configuration: configuration) { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try! JSONValue.parse(fixture.bytes))
        }
    }
    Benchmark("parse \(size): JSONSerialization", configuration: configuration) { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try! JSONSerialization.jsonObject(with: fixture.data))
        }
    }
    Benchmark("parse \(size): JSONDecoder", configuration: configuration) { benchmark in
        let decoder = JSONDecoder()
        for _ in benchmark.scaledIterations {
            blackHole(try! decoder.decode(Model.self, from: fixture.data))
        }
    }
    Benchmark("serialize \(size): ConciergeJSON", configuration: configuration) { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(fixture.value.serialized())
        }
    }
    Benchmark("serialize \(size): JSONSerialization", configuration: configuration) { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try! JSONSerialization.data(withJSONObject: fixture.object))
        }
    }
    Benchmark("serialize \(size): JSONEncoder", configuration: configuration) { benchmark in
        let encoder = JSONEncoder()
        for _ in benchmark.scaledIterations {
            blackHole(try! encoder.encode(fixture.model))
        }
    }
}

let benchmarks: @Sendable () -> Void = {
    register(Fixture("Echo intent", Bodies.echoIntent, as: EchoIntent.self))
    register(Fixture("Echo reply", Bodies.echoReply, as: EchoReply.self))
    register(Fixture("SendPayment interaction", Bodies.sendPaymentInteraction, as: SendPaymentInteraction.self))
    register(Fixture("RequestRide resolve", Bodies.rideResolve, as: RideResolve.self))
    register(Fixture("error", Bodies.error, as: ErrorBody.self))
    register(Fixture("progress", Bodies.progress, as: ProgressBody.self))
}
