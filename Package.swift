// swift-tools-version:6.2
import PackageDescription

// Linux only: the broker and the worker runtime read /proc, wait on eventfd and call Glibc, so the package
// declares no Apple platforms.

/// One set of Swift settings for every Swift target (Swift 6 language mode comes from the tools version).
let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

/// This manifest's directory, with a trailing slash (the linker needs absolute paths to files in the package).
let packageDirectory = String(#filePath.dropLast("Package.swift".count))

let package = Package(
    name: "concierge",
    products: [
        .executable(name: "concierge", targets: ["concierge"]),
        .library(name: "IntentKit", targets: ["IntentKit"]),
        .library(name: "IntentTesting", targets: ["IntentTesting"]),
        .library(name: "IntentWorker", targets: ["IntentWorker"]),
        // `Worker` and `ParentWatch` as ServiceLifecycle `Service`s, for a program that runs workers in its own
        // ServiceGroup; a worker package built on WorkerMain does not need it.
        .library(name: "IntentWorkerLifecycle", targets: ["IntentWorkerLifecycle"]),
        // A worker executable's whole entry point: `WorkerMain.run(provider)` (Docs/WRITING-HANDLERS.md).
        .library(name: "ConciergeCommandLine", targets: ["ConciergeCommandLine"]),
        .library(name: "IntentPool", targets: ["IntentPool"]),
        .executable(name: "concierge-worker", targets: ["concierge-worker"]),
        .library(name: "IntentClient", targets: ["IntentClient"]),
        .library(name: "IntentBroker", targets: ["IntentBroker"]),
        .library(name: "ConciergeExamples", targets: ["ConciergeExamples"]),
        .library(name: "IntentLoad", targets: ["IntentLoad"]),
        .library(name: "IntentJournal", targets: ["IntentJournal"]),
        .plugin(name: "IntentDefinitionPlugin", targets: ["IntentDefinitionPlugin"]),
    ],
    // Build weight (issue 45): what only some deployments use is built only when asked for, so that the quick start
    // and a team's worker package build in minutes. The default build has none of them; `swift build --traits Full`
    // (or `--enable-all-traits`) has all three, and a dependent package names them on its `.package` line
    // (`traits: ["PostgreSQL"]`). README, "Build options".
    traits: [
        .trait(
            name: "Tracing",
            description: "Export spans over OTLP/HTTP with Swift OTel (--tracing; Docs/TRACING.md). Without it the "
                + "trace context still travels and spans cost nothing; --tracing is refused."),
        .trait(
            name: "TLS",
            description: "The gateway's HTTPS (--tls-cert, --tls-key, --tls-client-ca) with swift-nio-ssl "
                + "(BoringSSL). Without it the gateway speaks plain HTTP and the TLS options are refused."),
        .trait(
            name: "PostgreSQL",
            description: "The PostgreSQL journal (--journal postgres://..., --standby) with postgres-nio. Without it "
                + "the SQLite journal works and a postgres:// journal is refused (journal-not-built)."),
        .trait(
            name: "Full", description: "Everything: Tracing, TLS and PostgreSQL.",
            enabledTraits: ["Tracing", "TLS", "PostgreSQL"]),
        .default(enabledTraits: []),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/swiftlang/swift-subprocess", from: "1.0.2"),
        .package(url: "https://github.com/apple/swift-system", from: "1.8.1"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.6.0"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift", from: "0.2.0"),
        .package(url: "https://github.com/x-sheep/swift-property-based", from: "2.0.1"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        // Tracing (issue 35): the API everywhere, Swift OTel's OTLP/HTTP exporter in ConciergeTracing only (its
        // OTLP/gRPC trait would add grpc-swift to every build).
        .package(url: "https://github.com/apple/swift-distributed-tracing", from: "1.7.3"),
        .package(url: "https://github.com/apple/swift-service-context", from: "1.5.1"),
        .package(url: "https://github.com/swift-otel/swift-otel", from: "1.6.0", traits: ["OTLPHTTP"]),
        .package(url: "https://github.com/swift-otel/swift-w3c-trace-context", from: "1.0.0"),
    ],
    targets: [
        // MARK: C binding
        // No pkgConfig: zmq.h is in the default include path and module.modulemap links libzmq, while Debian's
        // libzmq.pc adds `-isystem /usr/include/mit-krb5`, which SwiftPM reports as a prohibited flag on every build
        // of this package and of every package that depends on it.
        .systemLibrary(
            name: "CZeroMQ",
            providers: [.apt(["libzmq3-dev"])]
        ),
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),

        // MARK: Libraries
        // The binding is where the codec writes: its sockets adopt IntentWire's `WireSink`.
        .target(name: "ZeroMQ", dependencies: ["CZeroMQ", "IntentWire"], swiftSettings: swiftSettings),
        .target(name: "ConciergeJSON", swiftSettings: swiftSettings),
        // The protocol's vocabulary (phases, job outcomes, error codes): what handler authors and the wire share.
        .target(name: "IntentVocabulary", swiftSettings: swiftSettings),
        .target(name: "IntentWire", dependencies: ["ConciergeJSON", "IntentVocabulary"], swiftSettings: swiftSettings),
        .target(
            name: "IntentKit", dependencies: ["ConciergeJSON", "IntentVocabulary"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "IntentTesting", dependencies: ["IntentKit", "ConciergeJSON", "IntentTranscript"],
            swiftSettings: swiftSettings
        ),
        // Transcripts: the format, reader, writer, comparison and coverage; the broker links it, so ConciergeJSON only.
        .target(name: "IntentTranscript", dependencies: ["ConciergeJSON"], swiftSettings: swiftSettings),
        .target(
            name: "IntentPermissions", dependencies: ["ConciergeJSON", "IntentVocabulary"], swiftSettings: swiftSettings
        ),
        // Replaying transcripts against a worker process or a live broker: the targets that need sockets.
        .target(
            name: "IntentTranscriptReplay",
            dependencies: ["IntentTranscript", "IntentWire", "ZeroMQ", "ConciergeJSON"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "IntentBroker",
            dependencies: [
                "ZeroMQ", "IntentWire", "IntentJournal", "IntentTranscript", "IntentPermissions",
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "HeapModule", package: "swift-collections"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        // The worker runtime, on the path of every worker package: no ServiceLifecycle (and so no
        // swift-async-algorithms or swift-collections) here, IntentWorkerLifecycle has the Service conformances.
        .target(
            name: "IntentWorker",
            dependencies: [
                "ZeroMQ", "IntentWire", "IntentKit", "ConciergeJSON",
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "IntentWorkerLifecycle",
            dependencies: [
                "IntentWorker", .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "IntentPool",
            dependencies: [
                "ZeroMQ", "IntentWire", "ConciergeJSON",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Subprocess", package: "swift-subprocess"),
                .product(name: "SystemPackage", package: "swift-system"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "IntentClient",
            dependencies: [
                "ZeroMQ", "IntentWire", "ConciergeJSON",
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "ConciergeExamples", dependencies: ["IntentKit"], swiftSettings: swiftSettings,
            // Its intents are generated from Intents/*.intent.json (Docs/CODEGEN.md).
            plugins: ["IntentDefinitionPlugin"]
        ),
        .target(name: "IntentCodegen", dependencies: ["ConciergeJSON"], swiftSettings: swiftSettings),
        .target(name: "ConciergeTop", swiftSettings: swiftSettings),
        .target(
            name: "ConciergeHTTP",
            dependencies: [
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        // Tracing's setup for the executables: Swift OTel bootstrapped when configured, W3C trace context to and from
        // ServiceContext (Docs/TRACING.md).
        .target(
            name: "ConciergeTracing",
            dependencies: [
                "IntentWire",
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "ServiceContextModule", package: "swift-service-context"),
                .product(name: "OTel", package: "swift-otel", condition: .when(traits: ["Tracing"])),
                .product(name: "Logging", package: "swift-log"),
                // With the Tracing trait only, which Swift OTel needs anyway: the exporter's service, and W3C trace
                // context (which brings swift-collections' OrderedCollections). Without them a worker package's
                // build (WorkerMain) has neither.
                .product(
                    name: "W3CTraceContext", package: "swift-w3c-trace-context", condition: .when(traits: ["Tracing"])),
                .product(
                    name: "ServiceLifecycle", package: "swift-service-lifecycle", condition: .when(traits: ["Tracing"])),
            ],
            swiftSettings: swiftSettings
        ),
        // The HTTP/JSON gateway (`concierge gateway`, Schemas/openapi.yaml): HTTP requests onto ConciergeClient.
        .target(
            name: "ConciergeGateway",
            dependencies: [
                "IntentClient", "IntentWire", "ConciergeJSON", "ConciergeHTTP", "ConciergeTracing", "IntentPermissions",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird", condition: .when(traits: ["TLS"])),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "ConciergeTestKit",
            dependencies: ["IntentClient", "IntentWire", "ConciergeJSON", "ConciergeTop"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "ConciergeCommandLine",
            dependencies: [
                "IntentWorker", "IntentKit", "IntentWire", "ZeroMQ", "ConciergeJSON", "ConciergeTracing",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                // UnixSignals only: the worker waits for SIGTERM/SIGINT itself (no ServiceGroup), so a worker
                // package does not build ServiceLifecycle, swift-async-algorithms and swift-collections.
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "IntentLoad",
            dependencies: [
                "ZeroMQ", "IntentWire", "ConciergeJSON",
                .product(name: "Histogram", package: "hdrhistogram-swift"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "IntentJournal",
            dependencies: [
                "CSQLite", .product(name: "Histogram", package: "hdrhistogram-swift"),
                .product(name: "PostgresNIO", package: "postgres-nio", condition: .when(traits: ["PostgreSQL"])),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),

        // MARK: Executables
        .executableTarget(
            name: "concierge",
            dependencies: [
                "IntentBroker", "IntentWorker", "IntentPool", "IntentClient", "IntentLoad", "ConciergeExamples",
                "ConciergeJSON", "IntentWire", "ZeroMQ", "ConciergeCommandLine", "IntentJournal", "ConciergeHTTP",
                "IntentPermissions",
                "ConciergeTop", "IntentKit", "IntentTranscript", "IntentTranscriptReplay", "IntentTesting",
                "ConciergeGateway", "ConciergeTracing",
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),

        .executableTarget(
            name: "concierge-worker",
            dependencies: [
                "ConciergeCommandLine", "ConciergeExamples",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: swiftSettings,
            // Every worker of a pool runs this binary, so its idle size counts once per process (Docs/PROFILES.md,
            // "The idle worker"):
            // - lld packs its relative relocations (DT_RELR, glibc 2.36 and later): about 1 MiB less read and mapped
            //   at start;
            // - Scripts/order-worker.ld, generated by Scripts/order-worker, puts the code run from start to the first
            //   jobs at the front of the text, so it is mapped in fewer 64 KiB windows;
            // - nothing is exported: the Swift runtime's `-export-dynamic` would put every symbol in .dynsym/.dynstr
            //   (about 0.6 MiB read at start), and nothing looks this executable's symbols up.
            linkerSettings: [
                .unsafeFlags(
                    [
                        "-use-ld=lld", "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs",
                        "-Xlinker", "-T", "-Xlinker", packageDirectory + "Scripts/order-worker.ld",
                        "-Xlinker", "--no-export-dynamic",
                    ],
                    .when(platforms: [.linux]))
            ]
        ),
        .executableTarget(
            name: "concierge-intentgen", dependencies: ["IntentCodegen"], swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "concierge-broker-sync",
            dependencies: ["IntentBroker", .product(name: "Logging", package: "swift-log")],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "zmq-roundtrip",
            dependencies: ["ZeroMQ", "IntentWire"],
            swiftSettings: swiftSettings
        ),

        // MARK: Plugins
        .plugin(
            name: "IntentDefinitionPlugin",
            capability: .buildTool(),
            dependencies: ["concierge-intentgen"]
        ),

        // MARK: Tests
        .testTarget(
            name: "IntentCodegenTests",
            dependencies: ["IntentCodegen", "IntentKit", "ConciergeJSON", "ConciergeExamples"],
            swiftSettings: swiftSettings
        ),
        .testTarget(name: "ZeroMQTests", dependencies: ["ZeroMQ", "IntentWire"], swiftSettings: swiftSettings),
        .testTarget(
            name: "IntentPermissionsTests", dependencies: ["IntentPermissions", "IntentVocabulary"],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "ConciergeJSONTests",
            dependencies: ["ConciergeJSON", .product(name: "PropertyBased", package: "swift-property-based")],
            swiftSettings: swiftSettings
        ),
        .testTarget(name: "ConciergeTopTests", dependencies: ["ConciergeTop"], swiftSettings: swiftSettings),
        .testTarget(
            name: "ConciergeHTTPTests",
            dependencies: [
                "ConciergeHTTP", "ConciergeTestKit", "ConciergeTop",
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "IntentKitTests",
            dependencies: [
                "IntentKit", "ConciergeExamples", "ConciergeJSON",
                .product(name: "PropertyBased", package: "swift-property-based"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "IntentTestingTests",
            dependencies: ["IntentTesting", "IntentKit", "ConciergeExamples", "ConciergeJSON"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "IntentTranscriptTests",
            dependencies: [
                "IntentTranscript", "IntentTranscriptReplay", "IntentTesting", "IntentKit", "ConciergeExamples",
                "ConciergeJSON", "ConciergeTestKit", "concierge", "concierge-worker", "IntentWire", "ZeroMQ",
            ],
            exclude: ["Fixtures"],  // read by path, and by the Python schema test
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "IntentBrokerTests",
            dependencies: [
                "IntentBroker", "IntentWire", "IntentPermissions", "ZeroMQ",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "PropertyBased", package: "swift-property-based"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "IntentPoolTests",
            dependencies: ["IntentPool", "ZeroMQ", .product(name: "Logging", package: "swift-log")],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "IntentWireTests",
            dependencies: [
                "IntentWire", "ConciergeJSON", .product(name: "PropertyBased", package: "swift-property-based"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "IntentClientTests",
            dependencies: ["IntentClient", "IntentWire", "ConciergeJSON", "ZeroMQ", "ConciergeTestKit", "concierge"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "IntentWorkerTests",
            dependencies: [
                "IntentWorker", "IntentWorkerLifecycle", "IntentKit", "IntentWire", "ZeroMQ",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "IntentLoadTests",
            dependencies: [
                "IntentLoad", "concierge", "ConciergeTestKit", "ConciergeJSON", "ZeroMQ", "IntentWire",
                .product(name: "Histogram", package: "hdrhistogram-swift"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "IntentJournalTests", dependencies: ["IntentJournal", "CSQLite", "concierge", "ConciergeTestKit"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "IntegrationTests",
            dependencies: [
                "concierge", "concierge-worker", "ConciergeTestKit", "ConciergeCommandLine", "IntentClient", "ZeroMQ",
                "IntentWire",
                "ConciergeJSON", "IntentBroker", "IntentPermissions", "ConciergeTop",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
    ]
)
