import Basics
import Emulator
import Foundation
import Manifests
import Reconciler
import RetentionMessaging
import RetentionMessagingModels
import Runtime
import Testing
@testable import Views


/// Random but valid manifests: every message covers every locale, so every default and rule resolves.
enum RandomManifests {
    static func make(_ random: inout SeededGenerator, directory: URL) -> ManifestSet {
        let allLocales = ["de-DE", "en-US", "fr-FR", "ja"]
        let locales = Array(allLocales.shuffled(using: &random).prefix(Int.random(in: 1...3, using: &random))).sorted()
        let products = (0..<Int.random(in: 1...3, using: &random)).map { index in
            ProductManifest(id: "product\(index)", locales: locales.filter { _ in Bool.random(using: &random) }.nonEmpty(or: locales),
                            location: Fixtures.at("app.yaml", 10 + index))
        }
        var app = Fixtures.app(directory: directory)
        app.products = products
        let images = (0..<Int.random(in: 0...3, using: &random)).map { index in
            Fixtures.image("image\(index)", size: index == 0 ? .fullSize : .bulletPoint,
                           png: TestPNG.variant(of: index == 0 ? TestPNG.fullSize : TestPNG.bulletPoint,
                                                tag: String(UInt64.random(in: 0...UInt64.max, using: &random))))
        }
        let fullSize = images.first { $0.size == .fullSize }?.name
        let bullets = images.filter { $0.size == .bulletPoint }.map(\.name)
        let messages = (0..<Int.random(in: 1...5, using: &random)).map { index in
            let plain = Bool.random(using: &random)
            return MessageManifest(name: "message\(index)", product: nil, headerPosition: nil, localizations: locales.map { locale in
                Fixtures.localization(locale, header: "Header \(index) \(Int.random(in: 0...3, using: &random))", body: "Body \(locale)",
                                      image: plain ? nil : fullSize, bullets: plain ? [] : Array(bullets.prefix(2)))
            }, location: Fixtures.at("messages.yaml", index))
        }
        var defaults: [DefaultAssignment] = []
        for product in products {
            for locale in product.locales where Int.random(in: 0..<4, using: &random) > 0 {
                defaults.append(DefaultAssignment(productId: product.id, locale: locale,
                                                  message: messages.randomElement(using: &random)!.name, location: Fixtures.at("defaults.yaml")))
            }
        }
        // At least one default, so every seed has a review decision to check.
        if defaults.isEmpty, let product = products.first, let locale = product.locales.first {
            defaults.append(DefaultAssignment(productId: product.id, locale: locale, message: messages[0].name,
                                              location: Fixtures.at("defaults.yaml")))
        }
        var percentLeft = 100.0
        let rules = (0..<Int.random(in: 0...5, using: &random)).map { index -> FlowRule in
            let message = messages.randomElement(using: &random)!.name
            var match = RuleMatch(products: Bool.random(using: &random) ? [products[0].id] : nil)
            if Bool.random(using: &random) && percentLeft >= 25 {
                match.split = TrafficSplit(group: "ab", percent: 25)
                percentLeft -= 25
            }
            let response: RuleResponse
            switch Int.random(in: 0..<4, using: &random) {
            case 0: response = .message(name: message)
            case 1: response = .alternateProduct(message: message, productId: products[0].id, billingPlanType: nil)
            case 2: response = .promotionalOffer(message: message, offerIdentifier: "offer\(index)")
            default: response = .none
            }
            return FlowRule(name: "rule\(index)", match: match, response: response, location: Fixtures.at("flow.yaml", index))
        }
        return ManifestSet(directory: directory, app: app, images: images.sorted { $0.name < $1.name }, messages: messages,
                           defaults: defaults.sorted { ($0.productId, $0.locale) < ($1.productId, $1.locale) },
                           flows: rules.isEmpty ? [] : [FlowManifest(name: "flow", localeFallbacks: [:], rules: rules, location: Fixtures.at("flow.yaml"))])
    }

    /// Moves PENDING items to a random review outcome (some stay PENDING), as App Review would.
    static func review(_ apple: EmulatedApple, _ environment: Environment, _ random: inout SeededGenerator) throws {
        let state = apple.state(environment)
        for id in state.messages.keys.sorted() where state.messages[id]?.state == .pending {
            switch Int.random(in: 0..<4, using: &random) {
            case 0: break
            case 3: try apple.emulator.rejectMessage(id, in: environment)
            default: try apple.emulator.approveMessage(id, in: environment)
            }
        }
        for id in state.images.keys.sorted() where state.images[id]?.state == .pending && Int.random(in: 0..<4, using: &random) > 0 {
            try apple.emulator.approveImage(id, in: environment)
        }
    }
}

extension Array {
    func nonEmpty(or fallback: [Element]) -> [Element] { isEmpty ? fallback : self }
}

@Suite("Properties over random manifests and review states")
struct PropertyTests {
    static let seeds: [UInt64] = Array(1...60)

    /// Everything customers can see refers only to APPROVED content (and, for known messages, APPROVED
    /// images), and every default the manifests assign is set exactly when its message is usable.
    /// Returns how many uses and assignments it checked, so a seed cannot pass by checking nothing.
    func expectOnlyApprovedInUse(_ state: EmulatorState, snapshot: RuntimeSnapshot?, desired: DesiredState, seed: UInt64) -> Int {
        func usable(_ id: String) -> Bool {
            guard let message = state.messages[id], message.state == .approved else { return false }
            return message.body.referencedImageIdentifiers.allSatisfy { state.images[$0]?.state == .approved }
        }
        var checked = 0
        for (pair, id) in state.defaults {
            #expect(usable(id), "seed \(seed): default \(pair) uses \(id)")
            checked += 1
        }
        for rule in snapshot?.rules ?? [] {
            for (locale, id) in rule.response.messageIdentifiers ?? [:] {
                #expect(usable(id), "seed \(seed): rule \(rule.id) (\(locale)) uses \(id)")
                checked += 1
            }
        }
        for assigned in desired.defaults {
            let pair = "\(assigned.productId)/\(assigned.locale)"
            let current = state.defaults[DefaultKey(productId: assigned.productId, locale: assigned.locale)]
            if usable(assigned.messageIdentifier) {
                #expect(current == assigned.messageIdentifier, "seed \(seed): default \(pair) is usable but not set")
            } else {
                #expect(current != assigned.messageIdentifier, "seed \(seed): default \(pair) set before approval")
            }
            checked += 1
        }
        return checked
    }

    @Test("no default and no published rule ever refers to content that is not APPROVED", arguments: seeds)
    func onlyApprovedContentIsUsed(seed: UInt64) async throws {
        var random = SeededGenerator(seed: seed)
        var harness = Harness(environment: .production)
        harness.manifests = RandomManifests.make(&random, directory: harness.directory)
        let desired = try harness.desired()
        var checked = 0
        for _ in 0..<3 {
            try await harness.apply()
            checked += expectOnlyApprovedInUse(harness.state, snapshot: try harness.published(), desired: desired, seed: seed)
            try RandomManifests.review(harness.apple, harness.environment, &random)
        }
        try await harness.apply()
        checked += expectOnlyApprovedInUse(harness.state, snapshot: try harness.published(), desired: desired, seed: seed)
        #expect(checked > 0, "seed \(seed) checked nothing")
    }

    @Test("over random manifests and review outcomes, a split group is never live in part, even while some of its arms are approved")
    func splitGroupsNeverGoLiveInPart() async throws {
        // Counts the snapshots in which a group had approved and unapproved arms at once: the case a
        // piecemeal publish would get wrong. Without any, this test would check nothing.
        var mixed = 0
        var groups = 0
        for seed in Self.seeds.prefix(40) {
            var random = SeededGenerator(seed: seed)
            var harness = Harness(environment: .production)
            harness.manifests = RandomManifests.make(&random, directory: harness.directory)
            let desired = try harness.desired()
            let arms = Dictionary(grouping: desired.rules.filter { $0.match.split != nil }, by: { $0.match.split!.salt })
            guard !arms.isEmpty else { continue }
            groups += 1
            for _ in 0..<3 {
                try await harness.apply()
                let state = harness.state
                func approved(_ rule: SnapshotRule) -> Bool {
                    (rule.response.messageIdentifiers ?? [:]).values.allSatisfy { id in
                        guard let message = state.messages[id], message.state == .approved else { return false }
                        return message.body.referencedImageIdentifiers.allSatisfy { state.images[$0]?.state == .approved }
                    }
                }
                let published = Set(try harness.published()?.rules.map(\.id) ?? [])
                for (group, groupArms) in arms {
                    let ids = Set(groupArms.map(\.id))
                    let live = published.intersection(ids)
                    #expect(live.isEmpty || live == ids, "seed \(seed): group \(group) is live with \(live.sorted()) of \(ids.sorted())")
                    let ready = groupArms.filter(approved).count
                    if ready > 0 && ready < groupArms.count {
                        mixed += 1
                        #expect(live.isEmpty, "seed \(seed): group \(group) went live while \(groupArms.count - ready) arm(s) wait")
                    }
                }
                try RandomManifests.review(harness.apple, harness.environment, &random)
            }
        }
        #expect(groups > 0 && mixed > 0, "\(groups) seeds had a split group, \(mixed) snapshots saw one in mixed review")
    }

    @Test("the same manifests and remote state give a byte-identical plan", arguments: seeds.prefix(30))
    func plansAreByteIdentical(seed: UInt64) async throws {
        var random = SeededGenerator(seed: seed)
        var harness = Harness(environment: seed % 2 == 0 ? .sandbox : .production)
        harness.manifests = RandomManifests.make(&random, directory: harness.directory)
        try await harness.apply()
        try RandomManifests.review(harness.apple, harness.environment, &random)
        let first = try await harness.plan(PlanOptions(prune: true))
        var again = harness
        var replay = SeededGenerator(seed: seed)
        again.manifests = RandomManifests.make(&replay, directory: harness.directory)
        let second = try await again.plan(PlanOptions(prune: true))
        #expect(try PlanJSON.encode(first.plan) == PlanJSON.encode(second.plan))
        #expect(PlanView.text(first.plan, painter: Painter(enabled: false)) == PlanView.text(second.plan, painter: Painter(enabled: false)))
        #expect(PlanView.markdown(first.plan) == PlanView.markdown(second.plan))
        #expect(try first.snapshot?.snapshot.encoded() == second.snapshot?.snapshot.encoded())
    }

    @Test("after an apply against a fault-free API a new plan has no ready actions", arguments: seeds.prefix(40))
    func applyLeavesNothingReady(seed: UInt64) async throws {
        var random = SeededGenerator(seed: seed)
        var harness = Harness(environment: seed % 3 == 0 ? .sandbox : .production)
        harness.manifests = RandomManifests.make(&random, directory: harness.directory)
        try await harness.apply()
        try RandomManifests.review(harness.apple, harness.environment, &random)
        try await harness.apply()
        let after = try await harness.plan()
        #expect(!after.plan.hasReadyActions, "seed \(seed): \(after.plan.actions.filter { $0.state == .ready }.map(\.id))")
        if harness.environment == .sandbox { #expect(after.plan.converged, "seed \(seed)") }
    }
}
