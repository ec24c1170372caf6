// swift-tools-version:6.0
import PackageDescription

// Tiers, bottom to top (imports only point downwards; every edge is declared here and only edges the
// code imports, which ModuleGraphTests checks against the import lines):
//   1. C wrappers: CYAML, COpenSSL, CCurl — each C library wrapped once; CEventLoop, the C
//      library's epoll and eventfd headers for the HTTP server's event loops and its thread-naming
//      call (nothing linked).
//   2. Foundation-only vocabulary: Basics (source locations, edit distance, the clock, thread names, terminal and HTML text),
//      RetentionMessagingModels (Apple's models, limits, PNG facts, canonical JSON), EventContract (the
//      members, streams, times and answers of decision and outcome events), and above them
//      StateLocations (where state lives: the one location grammar, shared by Manifests and StateStore) and
//      HTTPCore (the request and response values, errors and header redaction both HTTP sides speak).
//   3. YAML (libyaml), Crypto (OpenSSL libcrypto), TLS (OpenSSL libssl), HTTPClient (libcurl, SigV4)
//      and HTTPServer (event loops, parser, sockets, serving over TLS; no libcurl).
//   4. Manifests (offline: YAML + Crypto + models) and Runtime (embeddable: Crypto + models) —
//      neither links libcurl; RetentionMessaging, the API client (HTTPCore + Crypto + models);
//      Experiments (the results readout of decision and outcome events: the contract, Apple's models and Basics only; its HTML page escapes through Basics' HTMLText, as the preview does).
//   5. Emulator, StateStore (the state document and the registry of its backends: file, S3; plain objects
//      beside the state), EventStore (decision and outcome events: keyed pseudonyms, the spooling
//      recorder, segments beside the state), Reconciler,
//      RealtimeServer (`serve`: Runtime behind HTTPServer) and Notifications (webhooks, and the
//      ledger beside the state that tells each event once).
//   6. CLIKit (the command-line toolkit: options, arguments, commands, console; Basics only), Views
//      (plans, statuses, diagnostics and progress worded for people, JSON and CI; CLIKit and the engines)
//      and Preview (the static HTML site of the messages as the cancellation sheet shows them; the
//      manifests and Apple's models only, no engine, no network).
//   7. Operations (the use cases behind the commands: plan, apply, import, validate, decide, the
//      performance test, state migration, outcomes pull, results' configuration, what a run tells the
//      webhook; the reconcile session they read an environment through, confirmation, interruption).
//      A command parses, calls one, views, exits.
//   8. Demo (the demo's story: a scripted user that prints each command line and runs the operation
//      behind it against the embedded emulator; it never reaches the command module).
//   9. RetentionSyncCommands (the commands and the list of them), then the two executables.
let package = Package(
    name: "retention-sync",
    products: [
        .executable(name: "retention-sync", targets: ["retention-sync"]),
        .library(name: "Runtime", targets: ["Runtime"]),
        // The modules the benchmark package (Benchmarks/) measures, so it builds apart from this
        // package and ships nothing with it. Not an API: the modules change with the tool.
        .library(name: "RetentionSyncModules",
                 targets: ["RetentionSyncCommands", "Views", "Reconciler", "Manifests", "Runtime", "Emulator", "RetentionMessagingModels", "RetentionMessaging",
                           "HTTPCore", "HTTPClient", "HTTPServer", "Crypto", "Basics", "YAML", "RealtimeServer", "EventContract", "Experiments", "EventStore",
                           "StateStore", "SyntheticImages", "Operations"]),
    ],
    targets: [
        .systemLibrary(name: "CYAML", path: "Sources/CYAML", pkgConfig: "yaml-0.1",
                       providers: [.apt(["libyaml-dev"]), .brew(["libyaml"])]),
        .systemLibrary(name: "COpenSSL", path: "Sources/COpenSSL", pkgConfig: "openssl",
                       providers: [.apt(["libssl-dev"]), .brew(["openssl@3"])]),
        .systemLibrary(name: "CEventLoop", path: "Sources/CEventLoop"),
        .systemLibrary(name: "CCurl", path: "Sources/CCurl", pkgConfig: "libcurl",
                       providers: [.apt(["libcurl4-openssl-dev"]), .brew(["curl"])]),

        .target(name: "Basics", dependencies: ["CEventLoop"]),
        .target(name: "RetentionMessagingModels", dependencies: ["Basics"]),
        .target(name: "StateLocations", dependencies: ["RetentionMessagingModels"]),
        .target(name: "HTTPCore"),

        .target(name: "YAML", dependencies: ["CYAML", "Basics"]),
        .target(name: "Crypto", dependencies: ["COpenSSL"]),
        .target(name: "TLS", dependencies: ["COpenSSL"]),
        .target(name: "HTTPClient", dependencies: ["Basics", "HTTPCore", "CCurl"]),
        .target(name: "HTTPServer", dependencies: ["HTTPCore", "Basics", "CEventLoop", "TLS"]),

        .target(name: "RetentionMessaging", dependencies: ["Basics", "RetentionMessagingModels", "HTTPCore", "Crypto"]),
        .target(name: "Manifests", dependencies: ["Basics", "YAML", "Crypto", "RetentionMessagingModels", "StateLocations"],
                resources: [.embedInCode("Resources/retention-sync.schema.json")]),

        .target(name: "Emulator", dependencies: ["Basics", "RetentionMessagingModels", "RetentionMessaging", "HTTPCore", "HTTPClient", "HTTPServer", "Crypto"]),
        .target(name: "Runtime", dependencies: ["Basics", "RetentionMessagingModels", "Crypto"]),
        .target(name: "EventContract", dependencies: ["Basics"]),
        // Writes PNG files for the tests and the benchmarks; the product only reads images.
        .target(name: "SyntheticImages", dependencies: ["RetentionMessagingModels"]),
        .target(name: "Experiments", dependencies: ["Basics", "EventContract", "RetentionMessagingModels"]),
        .target(name: "StateStore", dependencies: ["Basics", "RetentionMessagingModels", "StateLocations", "Runtime", "HTTPCore", "HTTPClient", "Crypto"]),
        .target(name: "EventStore", dependencies: ["Basics", "RetentionMessagingModels", "StateStore", "EventContract", "Crypto", "Runtime"]),
        .target(name: "Notifications", dependencies: ["Basics", "RetentionMessagingModels", "HTTPCore", "HTTPClient", "StateStore"]),
        .target(name: "RealtimeServer", dependencies: ["Basics", "Runtime", "EventStore", "EventContract", "RetentionMessaging", "RetentionMessagingModels", "HTTPCore", "HTTPServer", "TLS", "Crypto", "StateLocations", "StateStore"]),
        .target(name: "Reconciler",
                dependencies: ["Basics", "Manifests", "RetentionMessagingModels", "RetentionMessaging", "Runtime", "Crypto", "StateLocations", "StateStore", "HTTPCore"]),

        .target(name: "CLIKit", dependencies: ["Basics"]),
        .target(name: "Views", dependencies: ["Basics", "CLIKit", "EventContract", "Experiments", "Manifests", "Reconciler", "RetentionMessaging", "RetentionMessagingModels", "Runtime",
                                              "StateStore", "YAML"]),
        .target(name: "Preview", dependencies: ["Basics", "Manifests", "RetentionMessagingModels"]),

        // The use cases the commands and the demo share: plan, apply, results' configuration, the
        // session they read an environment through, confirmation, interruption and notifications.
        .target(name: "Operations", dependencies: ["Basics", "CLIKit", "EventContract", "EventStore", "Experiments", "HTTPClient", "HTTPCore", "Manifests", "Notifications",
                                                  "Reconciler", "RetentionMessaging", "RetentionMessagingModels", "Runtime", "StateLocations",
                                                  "StateStore", "Views", "YAML"]),

        // The demo's story: a scripted user running the operations behind the commands against the
        // embedded emulator.
        .target(name: "Demo", dependencies: ["Basics", "CLIKit", "Views", "Reconciler", "Manifests", "Operations", "Runtime", "StateLocations", "StateStore", "Emulator",
                                            "RetentionMessagingModels", "Experiments", "EventStore", "RetentionMessaging", "HTTPCore", "HTTPClient", "HTTPServer",
                                            "Crypto", "RealtimeServer"]),
        .target(name: "RetentionSyncCommands",
                dependencies: ["Basics", "CLIKit", "Views", "Preview", "Demo", "Reconciler", "Manifests", "Operations", "Runtime", "StateLocations", "StateStore", "Emulator", "RetentionMessagingModels",
                               "EventContract", "Experiments", "EventStore", "RetentionMessaging", "HTTPCore", "HTTPClient", "HTTPServer", "Crypto", "RealtimeServer", "TLS",
                               "Notifications"]),
        .executableTarget(name: "retention-sync", dependencies: ["RetentionSyncCommands", "CLIKit"]),

        .target(name: "TestSupport", dependencies: ["Basics", "HTTPCore", "HTTPClient", "HTTPServer", "Crypto", "RetentionMessaging"], path: "Tests/TestSupport"),
        // Helpers two test tiers share: the commands' in-process harness (and the child processes the
        // integration tests start), and the simulated customers the results tests count.
        .target(name: "CommandTestSupport",
                dependencies: ["TestSupport", "Basics", "CLIKit", "Crypto", "Emulator", "HTTPClient", "HTTPCore", "RetentionMessaging", "RetentionMessagingModels",
                               "Operations", "RetentionSyncCommands", "Runtime", "Views"],
                path: "Tests/CommandTestSupport"),
        .target(name: "ExperimentsTestSupport", dependencies: ["TestSupport", "Basics", "EventContract", "Experiments"], path: "Tests/ExperimentsTestSupport"),
        .target(name: "EngineTestSupport",
                dependencies: ["TestSupport", "Basics", "Crypto", "EventContract", "EventStore", "Experiments", "HTTPClient", "HTTPCore", "HTTPServer", "Notifications",
                               "RetentionMessagingModels", "Runtime", "StateStore"],
                path: "Tests/EngineTestSupport"),
        // The integration tier: every test that starts a program (Chromium, a JVM with PySpark, DuckDB,
        // moto, git, bash, the built retention-sync) or a server the module tiers do not own.
        .testTarget(name: "IntegrationTests",
                    dependencies: ["TestSupport", "CommandTestSupport", "ExperimentsTestSupport", "EngineTestSupport", "Basics", "CLIKit", "Views", "RetentionSyncCommands", "Manifests", "Emulator", "Crypto", "StateLocations", "StateStore", "HTTPCore", "HTTPClient", "HTTPServer",
                                   "Runtime", "RetentionMessagingModels", "RealtimeServer", "EventStore", "EventContract", "Experiments", "RetentionMessaging",
                                   "Operations", "YAML", "Notifications", "SyntheticImages", "Reconciler"]),
        .testTarget(name: "WorkflowTests", dependencies: ["TestSupport"]),
        .testTarget(name: "YAMLTests", dependencies: ["YAML", "Basics"]),
        .testTarget(name: "BasicsTests", dependencies: ["Basics"]),
        .testTarget(name: "CryptoTests", dependencies: ["TestSupport", "Crypto"]),
        .testTarget(name: "HTTPClientTests", dependencies: ["TestSupport", "HTTPCore", "HTTPClient", "HTTPServer"]),
        .testTarget(name: "HTTPServerTests", dependencies: ["TestSupport", "Basics", "HTTPCore", "HTTPClient", "HTTPServer", "TLS"]),
        .testTarget(name: "RetentionMessagingTests",
                    dependencies: ["TestSupport", "Basics", "RetentionMessagingModels", "RetentionMessaging", "Emulator", "HTTPCore", "HTTPClient", "HTTPServer", "Crypto", "SyntheticImages"]),
        .testTarget(name: "ManifestsTests", dependencies: ["TestSupport", "Manifests", "YAML", "Basics", "RetentionMessagingModels", "StateLocations",
                                                          "Views"]),
        .testTarget(name: "ExperimentsTests", dependencies: ["TestSupport", "Basics", "ExperimentsTestSupport", "EventContract", "Experiments", "Views"]),
        .testTarget(name: "EventStoreTests",
                    dependencies: ["TestSupport", "EngineTestSupport", "EventContract", "EventStore", "Experiments", "StateStore", "RetentionMessagingModels"]),
        .testTarget(name: "RuntimeTests", dependencies: ["TestSupport", "Basics", "Runtime", "Crypto", "RetentionMessagingModels"]),
        .testTarget(name: "RealtimeServerTests",
                    dependencies: ["TestSupport", "Basics", "RealtimeServer", "Runtime", "HTTPCore", "HTTPClient", "HTTPServer", "Crypto", "RetentionMessagingModels",
                                   "EventStore", "EventContract", "StateStore"]),
        .testTarget(name: "ReconcilerTests",
                    dependencies: ["TestSupport", "Basics", "Reconciler", "Views", "Emulator", "Manifests", "Runtime", "RetentionMessagingModels", "RetentionMessaging", "HTTPCore", "Crypto",
                                   "StateStore", "YAML"]),
        .testTarget(name: "StateStoreTests", dependencies: ["TestSupport", "Basics", "EngineTestSupport", "StateLocations", "StateStore", "Runtime", "RetentionMessagingModels", "HTTPCore", "HTTPClient", "HTTPServer"]),
        .testTarget(name: "NotificationsTests",
                    dependencies: ["TestSupport", "Basics", "EngineTestSupport", "Notifications", "HTTPCore", "HTTPClient", "HTTPServer", "StateStore", "RetentionMessagingModels"]),
        .testTarget(name: "PreviewTests", dependencies: ["TestSupport", "Basics", "Preview", "Manifests", "RetentionMessagingModels"]),
        .testTarget(name: "RetentionSyncCommandsTests",
                    dependencies: ["TestSupport", "EngineTestSupport", "CommandTestSupport", "Basics", "CLIKit", "Views", "Demo", "RetentionSyncCommands", "Reconciler", "Emulator", "Crypto", "StateLocations", "StateStore", "HTTPCore", "Runtime", "RetentionMessagingModels", "EventStore", "EventContract", "RetentionMessaging", "Operations", "YAML"]),
    ],
    swiftLanguageModes: [.v6]
)

// Strict settings for every Swift target, in one place.
for target in package.targets where target.type != .system {
    target.swiftSettings = (target.swiftSettings ?? []) + [
        .enableUpcomingFeature("ExistentialAny"),
        .enableUpcomingFeature("InternalImportsByDefault"),
        .enableUpcomingFeature("MemberImportVisibility"),
    ]
}
