// swift-tools-version:6.0
import PackageDescription

// The benchmarks: a package of their own, so the tool's package ships no benchmark and its build and
// tests never compile one. Build the tool and the suites side by side:
//   swift build -c release --package-path Benchmarks --product retention-sync
//   swift build -c release --package-path Benchmarks --product retention-sync-bench
//   Benchmarks/.build/release/retention-sync-bench <suite>
// Every suite prints figures; none asserts a timing (docs/benchmarks.md).
let package = Package(
    name: "retention-sync-benchmarks",
    dependencies: [
        .package(name: "retention-sync", path: ".."),
    ],
    targets: [
        .executableTarget(name: "retention-sync-bench",
                          dependencies: [.product(name: "RetentionSyncModules", package: "retention-sync")]),
    ],
    swiftLanguageModes: [.v6]
)

// The tool's strict settings (../Package.swift), here too.
for target in package.targets {
    target.swiftSettings = (target.swiftSettings ?? []) + [
        .enableUpcomingFeature("ExistentialAny"),
        .enableUpcomingFeature("InternalImportsByDefault"),
        .enableUpcomingFeature("MemberImportVisibility"),
    ]
}
