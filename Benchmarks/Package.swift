// swift-tools-version:6.3
import PackageDescription

// The JSON micro-benchmarks (issue 14): ConciergeJSON against Foundation's JSONSerialization and
// JSONDecoder/JSONEncoder on the protocol's bodies. A package of its own, so that the main package and CI never
// resolve package-benchmark. Run from this folder:
//
//   swift package --allow-writing-to-package-directory benchmark
//
// ConciergeJSON is not a product of the main package; the IntentKit product builds it, and its module is imported
// from there.
let package = Package(
    name: "concierge-benchmarks",
    dependencies: [
        .package(name: "concierge", path: ".."),
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        .executableTarget(
            name: "JSONCodecs",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "IntentKit", package: "concierge"),
            ],
            path: "Benchmarks/JSONCodecs",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        )
    ]
)
