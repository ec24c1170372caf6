// swift-tools-version:6.0
import PackageDescription

// Layers, bottom to top: C wrappers → YAML / Crypto / HTTP → Apple's API and the manifests →
// the emulator, the runtime and the reconciler → the commands → the two executables.
// Imports only point downwards.
let package = Package(
    name: "retention-sync",
    products: [
        .executable(name: "retention-sync", targets: ["retention-sync"]),
        .executable(name: "retention-sync-bench", targets: ["retention-sync-bench"]),
        .library(name: "Runtime", targets: ["Runtime"]),
    ],
    targets: [
        .systemLibrary(name: "CYAML", path: "Sources/CYAML", pkgConfig: "yaml-0.1",
                       providers: [.apt(["libyaml-dev"])]),
        .systemLibrary(name: "COpenSSL", path: "Sources/COpenSSL", pkgConfig: "libcrypto",
                       providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CCurl", path: "Sources/CCurl", pkgConfig: "libcurl",
                       providers: [.apt(["libcurl4-openssl-dev"])]),

        .target(name: "YAML", dependencies: ["CYAML"]),
        .target(name: "Crypto", dependencies: ["COpenSSL"]),
        .target(name: "HTTP", dependencies: ["CCurl"]),

        .target(name: "RetentionMessaging", dependencies: ["HTTP", "Crypto"]),
        .target(name: "Manifests", dependencies: ["YAML", "Crypto", "RetentionMessaging"]),

        .target(name: "Emulator", dependencies: ["RetentionMessaging", "HTTP", "Crypto"]),
        .target(name: "Runtime", dependencies: ["RetentionMessaging", "Crypto"]),
        .target(name: "Reconciler", dependencies: ["Manifests", "RetentionMessaging", "Runtime", "Crypto"]),

        .target(name: "RetentionSyncCommands",
                dependencies: ["Reconciler", "Manifests", "Runtime", "Emulator", "RetentionMessaging", "HTTP", "Crypto", "YAML"]),
        .executableTarget(name: "retention-sync", dependencies: ["RetentionSyncCommands"]),
        .executableTarget(name: "retention-sync-bench",
                          dependencies: ["RetentionSyncCommands", "Reconciler", "Manifests", "Runtime", "Emulator", "RetentionMessaging", "HTTP", "Crypto"]),

        .testTarget(name: "YAMLTests", dependencies: ["YAML"]),
        .testTarget(name: "CryptoTests", dependencies: ["Crypto"]),
        .testTarget(name: "HTTPTests", dependencies: ["HTTP"]),
        .testTarget(name: "RetentionMessagingTests", dependencies: ["RetentionMessaging", "Emulator", "HTTP", "Crypto"]),
        .testTarget(name: "ManifestsTests", dependencies: ["Manifests", "YAML"]),
        .testTarget(name: "RuntimeTests", dependencies: ["Runtime", "Crypto", "RetentionMessaging"]),
        .testTarget(name: "ReconcilerTests", dependencies: ["Reconciler", "Emulator", "Manifests", "Runtime", "RetentionMessaging", "Crypto"]),
        .testTarget(name: "RetentionSyncCommandsTests", dependencies: ["RetentionSyncCommands", "Emulator", "Crypto"]),
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
