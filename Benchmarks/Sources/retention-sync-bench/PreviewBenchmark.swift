import Foundation

/// Time and peak memory of `retention-sync preview` over the large generated app (2,000 messages,
/// 200 images, the manifests benchmark's app): the real command in a child process of its own, so
/// its peak memory is its own and not the generator's. Target: under 10 s and 200 MB.
@Sendable func previewBenchmark(_ arguments: [String]) async throws {
    var runs = 3
    if let index = arguments.firstIndex(of: "--runs"), index + 1 < arguments.count, let value = Int(arguments[index + 1]) {
        runs = max(1, value)
    }
    let binary = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("retention-sync")
    guard FileManager.default.isExecutableFile(atPath: binary.path) else {
        throw PreviewBenchmarkFailure(description: "\(binary.path) is missing: build it first (swift build -c release)")
    }
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("retention-sync-bench-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: directory) }
    let manifests = directory.appendingPathComponent("manifests")
    let generated = try BenchmarkApp.write(to: manifests)
    print("preview: \(generated) in \(manifests.path)")

    var times: [Double] = []
    var peak = 0
    var output = ""
    for _ in 0..<runs {
        let process = Process()
        process.executableURL = binary
        process.arguments = ["preview", "--manifests", manifests.path, "--out", directory.appendingPathComponent("site").path]
        process.environment = ["PATH": "/usr/bin:/bin", "NO_COLOR": "1"]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        let start = DispatchTime.now().uptimeNanoseconds
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        times.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
        output = String(decoding: data, as: UTF8.self)
        guard process.terminationStatus == 0 else {
            throw PreviewBenchmarkFailure(description: "retention-sync preview exited with \(process.terminationStatus):\n\(output.suffix(2000))")
        }
        peak = max(peak, childrenPeakResidentKilobytes())
    }
    let site = directory.appendingPathComponent("site")
    let pages = (try? FileManager.default.contentsOfDirectory(atPath: site.appendingPathComponent("messages").path).count) ?? 0
    // The generated app leaves most messages unused on purpose: only the command's summary line is shown.
    for line in output.split(separator: "\n") where line.contains("index.html:") { print("  \(line)") }
    print(String(format: "  first run %.2f s, best of %d %.2f s (%d message pages)", times[0], runs, times.min()!, pages))
    print(String(format: "  peak memory of the command (ru_maxrss): %.1f MB; target: under 10 s and 200 MB", Double(peak) / 1024))
}

private struct PreviewBenchmarkFailure: Error, CustomStringConvertible {
    var description: String
}

/// The largest peak resident memory of the child processes waited for, in kilobytes.
private func childrenPeakResidentKilobytes() -> Int {
    var usage = rusage()
    #if os(Linux)
    getrusage(__rusage_who_t(RUSAGE_CHILDREN.rawValue), &usage)
    #else
    getrusage(RUSAGE_CHILDREN, &usage)
    #endif
    return Int(usage.ru_maxrss)
}
