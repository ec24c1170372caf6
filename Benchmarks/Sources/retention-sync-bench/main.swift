import Foundation

// Benchmarks print figures; they never assert timings. Each suite lives in its own file.
let suites: [(name: String, summary: String, run: @Sendable ([String]) async throws -> Void)] = [
    ("manifests", "load + validate a large generated app", manifestsBenchmark),
    ("client", "API client overhead and emulator throughput on loopback", clientBenchmark),
    ("runtime", "realtime decisions per second and latency", runtimeBenchmark),
    ("reconciler", "plan and apply of a large generated app", reconcilerBenchmark),
    ("performance-test", "the emulator's sandbox performance test against a loopback endpoint", performanceTestBenchmark),
    ("serve", "realtime endpoint throughput and latency on loopback (its own process; --recording: off vs on; --control: the same without a secret, the noise floor; --repeat N)", serveBenchmark),
    ("results", "results over 10 million generated decisions and 3 million outcomes (--readers N: parsing threads, 0 for none; --by WHAT[,WHAT…]: also each breakdown; --vs-duckdb, --vs-spark: the manual's SQL on the same files)", resultsBenchmark),
    ("preview", "retention-sync preview of a large generated app (2,000 messages, 200 images): time and peak memory", previewBenchmark),
    ("outcomes", "outcomes pull over the emulator's Notification History: calls per 1,000 notifications", outcomesBenchmark),
    ("facts", "a facts table of 10 million customers (--customers N): load time, memory per customer, lookup and match.customer cost", factsBenchmark),
]
let arguments = Array(CommandLine.arguments.dropFirst())
guard let name = arguments.first, let suite = suites.first(where: { $0.name == name }) else {
    print("Usage: retention-sync-bench <suite> [options]\n\nSuites:")
    for suite in suites { print("  \(suite.name.padding(toLength: 12, withPad: " ", startingAt: 0))\(suite.summary)") }
    exit(arguments.isEmpty ? 0 : 64)
}
do {
    try await suite.run(Array(arguments.dropFirst()))
} catch {
    FileHandle.standardError.write(Data("error: \(error)\n".utf8))
    exit(1)
}
