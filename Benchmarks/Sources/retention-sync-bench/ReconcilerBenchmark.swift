import Basics
import Crypto
import Emulator
import Foundation
import SyntheticImages
import Manifests
import Reconciler
import RetentionMessaging
import RetentionMessagingModels
import YAML

/// Plan and apply of a large app on the in-process emulator: 2,000 messages (one localization
/// each), 200 images, 20 products × 39 locales of defaults and a 200-rule flow, built in memory.
/// Prints plan wall time (fresh and in sync), the API calls one plan makes (two list calls, one
/// GET /default per declared pair, one realtime URL read), and the virtual time a first sandbox
/// apply takes under Apple's rate limits against the floor those limits impose.
@Sendable func reconcilerBenchmark(_ arguments: [String]) async throws {
    var runs = 5
    if let index = arguments.firstIndex(of: "--runs"), index + 1 < arguments.count, let value = Int(arguments[index + 1]) {
        runs = max(1, value)
    }
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("retention-sync-bench-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: directory) }
    let manifests = LargeApp.make(directory: directory)
    let pairs = manifests.app.products.reduce(0) { $0 + $1.locales.count }
    print("reconciler: \(manifests.messages.count) messages, \(manifests.images.count) images, \(manifests.app.products.count) products × \(manifests.app.products[0].locales.count) locales (\(pairs) default pairs), \(manifests.flows[0].rules.count)-rule flow")

    let key = ES256PrivateKey.generate()
    let clock = VirtualClock()
    let start = clock.now()
    let emulator = Emulator(configuration: EmulatorConfiguration(publicKey: key.publicKey, rateLimit: .apple, clock: clock))
    let credentials = Credentials(keyId: "BENCHKEY01", issuerId: "57246542-96fe-1a63-e053-0824d011072a",
                                  bundleId: manifests.app.bundleId, privateKey: key)
    let client = RetentionMessagingClient(environment: .sandbox, credentials: credentials,
                                          transport: emulator.transport(defaultEnvironment: .sandbox), pacing: .apple, clock: clock)
    let derive = DispatchTime.now().uptimeNanoseconds
    let desired = try Identities.derive(manifests, environment: .sandbox)
    print(String(format: "  derive identities: %.1f ms", Double(DispatchTime.now().uptimeNanoseconds - derive) / 1e6))
    let reconciler = Reconciler(api: client, state: Reconciler.store(for: desired), clock: SystemClock())

    let timer = PlanTimer(client: client, desired: desired)
    let beforeFresh = client.requestCounts
    let (fresh, freshMs, freshCalls) = try await timer.plan(reconciler)
    print(String(format: "  plan, empty sandbox: %.1f ms wall, %d API calls%@ (expected 2 + %d + 1 = %d), %d actions",
                 freshMs, freshCalls, timer.sentAgain(since: beforeFresh), pairs, pairs + 3, fresh.plan.actions.count))

    try await applyFirstTime(fresh, reconciler: reconciler, client: client, clock: clock, start: start)
    try await planInSync(reconciler, timer: timer, clock: clock, runs: runs)
}

/// Times plans against one client. Calls, not attempts: a read sent again (a token that expired on
/// its way while other reads' pacing moved the virtual clock) is counted once, and named apart.
private struct PlanTimer {
    let client: RetentionMessagingClient
    let desired: DesiredState

    /// The plan, its wall time in milliseconds and the calls it made.
    func plan(_ reconciler: Reconciler) async throws -> (PlanResult, Double, Int) {
        let before = client.requestCounts
        let begin = DispatchTime.now().uptimeNanoseconds
        let planned = try await reconciler.plan(desired)
        let after = client.requestCounts
        return (planned, Double(DispatchTime.now().uptimeNanoseconds - begin) / 1e6,
                (after.total - after.retries) - (before.total - before.retries))
    }

    func sentAgain(since before: RequestCounts) -> String {
        let retries = client.requestCounts.retries - before.retries
        return retries == 0 ? "" : " (\(retries) sent again)"
    }
}

/// The first sandbox apply, against the floor Apple's rate limits impose on the whole run.
private func applyFirstTime(_ fresh: PlanResult, reconciler: Reconciler, client: RetentionMessagingClient, clock: VirtualClock,
                            start: Double) async throws {
    let applyBegin = DispatchTime.now().uptimeNanoseconds
    let virtualBefore = clock.now()
    let report = try await reconciler.apply(fresh)
    let applyWall = Double(DispatchTime.now().uptimeNanoseconds - applyBegin) / 1e9
    let applyVirtual = clock.now() - virtualBefore
    let sent = client.requestCounts
    let rates = Estimate.rates(for: .sandbox)
    // The floor counts every request of the run (the plan's reads and the apply's writes), per class.
    let floor = Estimate.floorSeconds(requests: sent.configureDefault, rate: rates.configureDefault)
        + Estimate.floorSeconds(requests: sent.other, rate: rates.other)
    let total = clock.now() - start
    print(String(format: "  apply, sandbox: %d done, %d requests (%d configure-default, %d other); %.1f s wall",
                 report.count(.done), report.requests.total, report.requests.configureDefault, report.requests.other, applyWall))
    print(String(format: "  plan + apply under Apple's limits: %.0f s virtual (%.2f h) vs floor %.0f s → %.1f%% above the floor (target within 10%%)",
                 total, total / 3600, floor, floor > 0 ? (total / floor - 1) * 100 : 0))
    print(String(format: "  the apply alone: %.0f s virtual; the plan's estimate said at least %.0f s",
                 applyVirtual, fresh.plan.estimate.minimumSeconds))

}

/// The scheduled reconcile with nothing to do, `runs` times, then one plan that reads every default.
private func planInSync(_ reconciler: Reconciler, timer: PlanTimer, clock: VirtualClock, runs: Int) async throws {
    var inSync: [Double] = []
    var calls = 0
    var converged = false
    var virtual = 0.0
    for _ in 0..<runs {
        let virtualStart = clock.now()
        let (planned, ms, made) = try await timer.plan(reconciler)
        virtual = clock.now() - virtualStart
        inSync.append(ms)
        calls = made
        converged = planned.plan.converged
        // What the scheduled apply does when nothing needs applying: advance the refresh window.
        _ = try await Applier(api: timer.client, state: reconciler.state, clock: SystemClock()).recordState(planned)
    }
    inSync.sort()
    let window = DefaultsRefresh.standard.description
    print(String(format: "  plan, in sync (the scheduled reconcile, --refresh-defaults %@): best %.1f ms, median %.1f ms of %d runs, %d API calls (target at most 3 + %@), %.1f s virtual under Apple's limits, converged: %@ (target under 500 ms)",
                 window, inSync[0], inSync[inSync.count / 2], runs, calls, window, virtual, converged ? "yes" : "no"))
    let full = Reconciler(api: timer.client, state: reconciler.state, refresh: .all, clock: SystemClock())
    let virtualStart = clock.now()
    let beforeFull = timer.client.requestCounts
    let (_, fullMs, fullCalls) = try await timer.plan(full)
    print(String(format: "  plan, in sync, --refresh-defaults all: %.1f ms wall, %d API calls%@, %.1f s virtual under Apple's limits",
                 fullMs, fullCalls, timer.sentAgain(since: beforeFull), clock.now() - virtualStart))
}

/// The large app, built in memory (the plan benchmark measures planning, not YAML loading).
private enum LargeApp {
    static func make(directory: URL) -> ManifestSet {
        let locales = Array(AppStoreLocales.all.prefix(40))
        let at = SourceLocation(file: "bench.yaml", line: 1, column: 1)
        let products = (0..<20).map { ProductManifest(id: "com.example.bench.product\($0)", locales: locales.sorted(), location: at) }
        let fullBase = PNGWriter.rgb(width: 3840, height: 160) { _, _ in (40, 60, 90) }
        let bulletBase = PNGWriter.rgb(width: 1024, height: 1024) { _, _ in (200, 120, 80) }
        var images: [ImageManifest] = []
        for index in 0..<100 {
            for (name, size, base) in [("full", ImageSize.fullSize, fullBase), ("bullet", .bulletPoint, bulletBase)] {
                let png = tagged(base, "\(name)-\(index)")
                images.append(ImageManifest(name: "\(name)-\(index)", file: "images/\(name)-\(index).png", size: size, png: png,
                                            sha256: Digest.sha256Hex(png), location: at))
            }
        }
        let messages = (0..<2000).map { index -> MessageManifest in
            let withImage = index % 10 == 0
            let image = (index / 10) % 100
            let localization = MessageLocalization(
                locale: locales[index % locales.count], header: "Stay with Bench, offer number \(index)",
                body: "Everything you made is saved. Come back any time, message \(index).",
                image: withImage ? ImageReference(name: "full-\(image)", altText: "A calm picture", location: at) : nil,
                bulletPoints: withImage ? (0..<3).map { BulletPoint(text: "Benefit \($0)", image: "bullet-\((image + $0) % 100)", altText: "An icon", location: at) } : [],
                location: at)
            return MessageManifest(name: String(format: "message-%04d", index), product: nil,
                                   headerPosition: withImage ? .aboveImage : nil, localizations: [localization], location: at)
        }
        func message(locale localeIndex: Int, seed: Int) -> String {
            String(format: "message-%04d", localeIndex + locales.count * (seed % (2000 / locales.count)))
        }
        var defaults: [DefaultAssignment] = []
        for (productIndex, product) in products.enumerated() {
            for (localeIndex, locale) in locales.enumerated() {
                defaults.append(DefaultAssignment(productId: product.id, locale: locale,
                                                  message: message(locale: localeIndex, seed: productIndex), location: at))
            }
        }
        defaults.sort { ($0.productId, $0.locale) < ($1.productId, $1.locale) }
        var rules: [FlowRule] = []
        for index in 0..<199 {
            let localeIndex = (index * 7) % locales.count
            var match = RuleMatch(products: [products[index % 20].id], locales: [locales[localeIndex]])
            if index % 4 == 2 { match.split = TrafficSplit(group: "test-\(index / 40)", percent: 10) }
            if index % 4 == 3 { match.environments = [.production] }
            let name = message(locale: localeIndex, seed: index + 1)
            let response: RuleResponse = switch index % 3 {
            case 0: .message(name: name)
            case 1: .promotionalOffer(message: name, offerIdentifier: "offer-\(index)")
            default: .alternateProduct(message: name, productId: products[(index + 1) % 20].id, billingPlanType: .monthly)
            }
            rules.append(FlowRule(name: "rule-\(index)", match: match, response: response, location: at))
        }
        rules.append(FlowRule(name: "everyone-else", match: RuleMatch(), response: .none, location: at))
        let app = AppManifest(bundleId: "com.example.bench", appAppleId: 1234567890, identityNamespace: nil,
                              environments: [EnvironmentSettings(environment: .sandbox, realtimeURL: "https://bench.example.com/sandbox",
                                                                 snapshotPath: ".retention-sync/sandbox.json", location: at)],
                              products: products, location: at)
        return ManifestSet(directory: directory, app: app, images: images.sorted { $0.name < $1.name }, messages: messages,
                           defaults: defaults, flows: [FlowManifest(name: "cancel-flow", localeFallbacks: [:], rules: rules, location: at)])
    }

    /// The same picture with a text chunk naming it, so each file hashes differently.
    static func tagged(_ png: [UInt8], _ tag: String) -> [UInt8] {
        let typeAndData = Array("tEXt".utf8) + Array("Comment".utf8) + [0] + Array(tag.utf8)
        func bigEndian(_ value: UInt32) -> [UInt8] {
            [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
        }
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in typeAndData {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? 0xEDB8_8320 ^ (crc >> 1) : crc >> 1 }
        }
        var out = png
        out.insert(contentsOf: bigEndian(UInt32(typeAndData.count - 4)) + typeAndData + bigEndian(crc ^ 0xFFFF_FFFF), at: png.count - 12)
        return out
    }
}
