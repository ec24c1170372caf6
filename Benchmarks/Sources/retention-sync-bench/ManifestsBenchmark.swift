import Foundation
import SyntheticImages
import Manifests
import RetentionMessaging
import RetentionMessagingModels
import Views

/// Load + validate time and peak memory for a generated app at Apple's limits: 2,000 messages
/// (2,000 Message documents, one localization each: the 2,000 uploads Apple allows), 200 real PNG
/// images, 20 products × every App Store Connect locale (39) of defaults, and a 200-rule flow.
@Sendable func manifestsBenchmark(_ arguments: [String]) async throws {
    var runs = 5
    if let index = arguments.firstIndex(of: "--runs"), index + 1 < arguments.count, let value = Int(arguments[index + 1]) {
        runs = max(1, value)
    }
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("retention-sync-bench-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: directory) }
    let generated = try BenchmarkApp.write(to: directory)
    print("manifests: \(generated) in \(directory.path)")
    let rssBefore = peakResidentKilobytes()

    var loads: [Double] = [], validations: [Double] = []
    var problems: [Diagnostic] = []
    for _ in 0..<runs {
        let start = DispatchTime.now().uptimeNanoseconds
        let (set, loadDiagnostics) = ManifestLoader.load(directory: directory, displayPath: "bench")
        let loaded = DispatchTime.now().uptimeNanoseconds
        let validation = set.map(ManifestValidator.validate) ?? []
        let validated = DispatchTime.now().uptimeNanoseconds
        loads.append(Double(loaded - start) / 1e6)
        validations.append(Double(validated - loaded) / 1e6)
        problems = loadDiagnostics + validation
    }
    guard !problems.hasErrors else {
        print(DiagnosticRenderer.render(Array(problems.filter { $0.severity == .error }.prefix(20)), format: .text, color: false))
        throw BenchmarkFailure(message: "the generated app should be valid but has \(DiagnosticRenderer.summary(problems))")
    }
    func ms(_ value: Double) -> String { String(format: "%.1f ms", value) }
    let totals = zip(loads, validations).map { $0 + $1 }
    let best = totals.indices.min { totals[$0] < totals[$1] }!
    print("  first run: load \(ms(loads[0])), validate \(ms(validations[0])), total \(ms(totals[0]))")
    print("  best of \(runs): load \(ms(loads[best])), validate \(ms(validations[best])), total \(ms(totals[best]))")
    print(String(format: "  peak memory (ru_maxrss): %.1f MB (%.1f MB after generating the files, before loading)",
                 Double(peakResidentKilobytes()) / 1024, Double(rssBefore) / 1024))
    // 2,000 messages but only 780 defaults and 199 rules to use them: the rest are reported unused.
    print("  diagnostics: \(DiagnosticRenderer.summary(problems)) (unused messages); target: under 300 ms and 150 MB")
}

private struct BenchmarkFailure: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}

/// What the process has used so far: its peak memory, its processor time.
func processUsage() -> rusage {
    var usage = rusage()
    #if os(Linux)
    getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
    #else
    getrusage(RUSAGE_SELF, &usage)
    #endif
    return usage
}

/// The high-water mark of resident memory, in kilobytes (Linux reports ru_maxrss in KB); the preview benchmark reads it too.
func peakResidentKilobytes() -> Int {
    Int(processUsage().ru_maxrss)
}

enum BenchmarkApp {
    static let locales = AppStoreLocales.all.filter { !AppStoreLocales.isUnconfirmed($0) }
    static let productCount = 20
    static let messageCount = 2000
    static let imagesPerSize = 100
    static let ruleCount = 200
    static let header = "apiVersion: retention-sync/v1\n"

    static func product(_ index: Int) -> String { "com.example.bench.product\(index)" }
    static func message(_ index: Int) -> String { "message-\(index)" }
    /// Message `index` is written in `locales[index % 39]`; every tenth one shows an image and bullets.
    static func locale(ofMessage index: Int) -> String { locales[index % locales.count] }
    static func hasImage(_ index: Int) -> Bool { index % 10 == 0 }
    /// A message in `localeIndex`'s locale, picked by `seed`, with or without images.
    static func message(localeIndex: Int, seed: Int, withImage: Bool) -> Int {
        var index = localeIndex + locales.count * (seed % (messageCount / locales.count))
        while hasImage(index) != withImage || index >= messageCount {
            index = (index + locales.count) % (locales.count * (messageCount / locales.count))
        }
        return index
    }

    static func write(to directory: URL) throws -> String {
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("images"), withIntermediateDirectories: true)
        func save(_ name: String, _ text: String) throws {
            try Data(text.utf8).write(to: directory.appendingPathComponent(name))
        }
        try save("app.yaml", appText())
        try save("images.yaml", try writeImages(to: directory))
        // 20 files of 100 Message documents each.
        for file in 0..<(messageCount / 100) {
            try save(String(format: "messages-%02d.yaml", file), messagesText(file: file))
        }
        try save("defaults.yaml", defaultsText())
        try save("cancel-flow.yaml", flowText())
        return "\(messageCount) messages, \(imagesPerSize * 2) images, \(productCount) products × \(locales.count) locales of defaults, a \(ruleCount)-rule flow"
    }

    private static func appText() -> String {
        var app = header + "kind: App\nbundleId: com.example.bench\nappAppleId: 1234567890\nenvironments:\n"
        app += "  sandbox: { realtimeURL: https://bench.example.com/sandbox, snapshotPath: .retention-sync/sandbox.json }\n"
        app += "  production: { realtimeURL: https://bench.example.com/production, snapshotPath: .retention-sync/production.json }\n"
        app += "products:\n"
        for index in 0..<productCount {
            app += "  - id: \(product(index))\n    locales: [\(locales.joined(separator: ", "))]\n"
        }
        return app
    }

    /// Real PNGs: one flat picture per size, with one pixel varied so every file hashes differently;
    /// returns their Image documents.
    private static func writeImages(to directory: URL) throws -> String {
        var images = ""
        for index in 0..<imagesPerSize {
            let marker = (UInt8(index % 256), UInt8(index / 256), UInt8(200))
            let full = PNGWriter.rgb(width: 3840, height: 160) { x, y in x == 0 && y == 0 ? marker : (40, 60, 90) }
            let bullet = PNGWriter.rgb(width: 1024, height: 1024) { x, y in x == 0 && y == 0 ? marker : (200, 120, 80) }
            try Data(full).write(to: directory.appendingPathComponent("images/full-\(index).png"))
            try Data(bullet).write(to: directory.appendingPathComponent("images/bullet-\(index).png"))
            images += header + "kind: Image\nname: full-\(index)\nfile: images/full-\(index).png\nsize: FULL_SIZE\n---\n"
            images += header + "kind: Image\nname: bullet-\(index)\nfile: images/bullet-\(index).png\nsize: BULLET_POINT\n---\n"
        }
        return images
    }

    /// The hundred Message documents of one file.
    private static func messagesText(file: Int) -> String {
        var text = ""
        for index in (file * 100)..<(file * 100 + 100) {
            text += header + "kind: Message\nname: \(message(index))\n"
            if hasImage(index) { text += "headerPosition: ABOVE_IMAGE\n" }
            text += "localizations:\n  \(locale(ofMessage: index)):\n"
            text += "    header: Stay with Bench, offer number \(index)\n"
            text += "    body: Everything you made is saved. Come back any time and pick up right where you left off, message \(index).\n"
            if hasImage(index) {
                let image = (index / 10) % imagesPerSize
                text += "    image: { name: full-\(image), altText: A calm picture number \(image) }\n"
                text += "    bulletPoints:\n"
                for bullet in 0..<3 {
                    text += "      - { text: Benefit \(bullet) of message \(index), image: bullet-\((image + bullet) % imagesPerSize), altText: An icon }\n"
                }
            }
            text += "---\n"
        }
        return text
    }

    private static func defaultsText() -> String {
        var defaults = header + "kind: Defaults\ndefaults:\n"
        for productIndex in 0..<productCount {
            for (localeIndex, locale) in locales.enumerated() {
                let chosen = message(localeIndex: localeIndex, seed: productIndex, withImage: productIndex % 2 == 0)
                defaults += "  - { products: [\(product(productIndex))], locales: [\(locale)], message: \(message(chosen)) }\n"
            }
        }
        return defaults
    }

    private static func flowText() -> String {
        var flow = header + "kind: Flow\nname: cancel-flow\nlocaleFallbacks: { de-AT: de-DE, en-IE: en-GB }\nrules:\n"
        for rule in 0..<(ruleCount - 1) {
            let productIndex = rule % productCount, localeIndex = (rule * 7) % locales.count
            flow += "  - name: rule-\(rule)\n    match:\n"
            flow += "      products: [\(product(productIndex))]\n      locales: [\(locales[localeIndex])]\n"
            if rule % 4 == 1 { flow += "      window: { from: \"2026-03-01T00:00:00Z\", until: \"2026-04-01T00:00:00Z\" }\n" }
            if rule % 4 == 2 { flow += "      split: { group: test-\(rule / 40), percent: 10 }\n" }
            if rule % 4 == 3 { flow += "      environments: [production]\n" }
            switch rule % 3 {
            case 0:
                let chosen = message(localeIndex: localeIndex, seed: rule, withImage: true)
                flow += "    response: { message: \(message(chosen)) }\n"
            case 1:
                let chosen = message(localeIndex: localeIndex, seed: rule, withImage: false)
                flow += "    response:\n      promotionalOffer: { message: \(message(chosen)), offerIdentifier: offer-\(rule) }\n"
            default:
                let chosen = message(localeIndex: localeIndex, seed: rule, withImage: false)
                flow += "    response:\n      alternateProduct: { message: \(message(chosen)), productId: \(product((productIndex + 1) % productCount)), billingPlanType: MONTHLY }\n"
            }
        }
        flow += "  - name: everyone-else\n    response: none\n"
        return flow
    }
}
