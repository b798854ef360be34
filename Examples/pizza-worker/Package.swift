// swift-tools-version:6.2
// The template a team copies to put its own intents on Concierge: definitions that generate typed Swift
// (Sources/PizzaIntents/Intents/*.intent.json and the IntentDefinitionPlugin), a handler, a worker executable that is
// one call (WorkerMain), and tests with the handler test kit (IntentTesting). README.md says how to copy it.
import Foundation
import PackageDescription

// Concierge, by path: this repository. SwiftPM names a dependency given by path after its folder, whatever the folder
// of your clone is called, so the manifest reads that name instead of assuming `concierge`. In your own package,
// depend on Concierge by URL and version (`.package(url: "https://…/concierge.git", from: "…")`, then
// `package: "concierge"`), or by the path of a clone.
let conciergeFolder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .appendingPathComponent("../..").standardizedFileURL
let concierge = conciergeFolder.lastPathComponent

let package = Package(
    name: "pizza-worker",
    dependencies: [
        .package(path: conciergeFolder.path)
    ],
    targets: [
        // The intents (generated from Intents/*.intent.json at every build) and their handlers.
        .target(
            name: "PizzaIntents",
            dependencies: [.product(name: "IntentKit", package: concierge)],
            plugins: [.plugin(name: "IntentDefinitionPlugin", package: concierge)]
        ),
        // The worker: the command line and environment of `concierge worker` around the handlers.
        .executableTarget(
            name: "pizza-worker",
            dependencies: [
                "PizzaIntents",
                .product(name: "IntentKit", package: concierge),
                .product(name: "ConciergeCommandLine", package: concierge),
            ]
        ),
        .testTarget(
            name: "PizzaIntentsTests",
            dependencies: [
                "PizzaIntents",
                .product(name: "IntentKit", package: concierge),
                .product(name: "IntentTesting", package: concierge),
            ]
        ),
    ]
)
