import Basics
import Foundation
import Manifests
import Reconciler
import RetentionMessagingModels
import Runtime
import Testing

/// Every kind of rule condition, written in a manifest, narrows whom `serve` answers: a condition the
/// snapshot compiler or the decision engine left out would make its rule match every customer. The
/// example for each kind is a switch without `default:`, so a new kind does not compile here until
/// it has one, and then fails here until it narrows what is served.
@Suite("Rule conditions")
struct RuleConditionTests {
    /// A customer asking `serve`, and the environment whose snapshot answers.
    struct Customer {
        var environment: Environment = .production
        var product = "monthly"
        var locale = "en-US"
        var signedDate: Int64 = 1_800_000_000_000
        var transaction = "2000000000000001"
        /// What Apple signed about the customer; nil when nothing is known.
        var facts: CustomerFacts? = nil
    }

    /// A condition, a customer it lets through, and one it keeps out.
    struct Example {
        var condition: MatchCondition
        var inside: Customer
        var outside: Customer
    }

    static func example(_ kind: MatchCondition.Kind) -> Example {
        switch kind {
        case .products:
            return Example(condition: .products(["monthly"]), inside: Customer(), outside: Customer(product: "yearly"))
        case .locales:
            return Example(condition: .locales(["en-US"]), inside: Customer(), outside: Customer(locale: "de-DE"))
        case .environments:
            return Example(condition: .environments([.production]), inside: Customer(), outside: Customer(environment: .sandbox))
        case .window:
            return Example(condition: .window(notBefore: 1_790_000_000_000, notAfter: 1_810_000_000_000),
                           inside: Customer(), outside: Customer(signedDate: 1_810_000_000_000))
        case .customer:
            return Example(condition: .customer(CustomerConditions(storefronts: ["DEU"])),
                           inside: Customer(facts: CustomerFacts(storefront: "DEU", transactionAsOf: 1_790_000_000_000)),
                           outside: Customer(facts: CustomerFacts(storefront: "USA", transactionAsOf: 1_790_000_000_000)))
        case .split:
            let share = TrafficSplit(group: "half", percent: 50)
            func transaction(inside: Bool) -> String {
                let found = (2_000_000_000_000_001...2_000_000_000_010_000).first { candidate in
                    (TrafficBucket.bucket(salt: "half", originalTransactionId: String(candidate)) < 5_000) == inside
                }
                return String(found ?? 0)
            }
            return Example(condition: .split(share), inside: Customer(transaction: transaction(inside: true)),
                           outside: Customer(transaction: transaction(inside: false)))
        }
    }

    /// The fixture App with `flow` as its only flow.
    static func withFlow(_ flow: FlowManifest) -> ManifestSet {
        let base = Fixtures.manifests(directory: Fixtures.temporaryDirectory())
        return ManifestSet(directory: base.directory, app: base.app, images: base.images, messages: base.messages,
                           defaults: base.defaults, flows: [flow])
    }

    /// What the manifests with one rule of this condition answer `customer`: the rule's id, or nil.
    static func answeringRule(_ condition: MatchCondition, for customer: Customer) throws -> String? {
        let manifests = withFlow(FlowManifest(name: "conditions", localeFallbacks: [:], rules: [
            FlowRule(name: "narrow", match: RuleMatch([condition]), response: .none, location: Fixtures.at("flow.yaml", 3)),
        ], location: Fixtures.at("flow.yaml")))
        let desired = try Identities.derive(manifests, environment: customer.environment)
        let snapshot = RuntimeSnapshot(bundleId: desired.bundleId, appAppleId: desired.appAppleId, environment: customer.environment,
                                       localeFallbacks: desired.localeFallbacks, rules: desired.rules)
        let engine = DecisionEngine(snapshot: snapshot, signer: nil)
        let request = DecodedRealtimeRequestBody(originalTransactionId: customer.transaction, appAppleId: desired.appAppleId ?? 0,
                                                 productId: customer.product, userLocale: customer.locale,
                                                 requestIdentifier: "7c3f9c1e-1b1d-4e55-9d55-3f1d2f6b8a10",
                                                 environment: customer.environment.appleName, signedDate: customer.signedDate)
        return try engine.decide(request, customer: customer.facts).answered?.ruleId
    }

    @Test("a rule with one condition answers the customer it names and no other", arguments: MatchCondition.Kind.allCases)
    func everyConditionNarrowsWhatServeAnswers(kind: MatchCondition.Kind) throws {
        let example = Self.example(kind)
        #expect(example.condition.kind == kind)
        #expect(try Self.answeringRule(example.condition, for: example.inside) == "conditions/narrow")
        #expect(try Self.answeringRule(example.condition, for: example.outside) == nil,
                "a \(kind) condition compiled to a rule that matches a customer outside it")
    }

    @Test("a rule without conditions answers everyone, and a validation warns that rules after it are unreachable")
    func aRuleWithoutConditionsMatchesEveryone() throws {
        #expect(try Self.answeringRule(.products(["monthly"]), for: Customer(product: "yearly")) == nil)
        let manifests = Self.withFlow(FlowManifest(name: "all", localeFallbacks: [:], rules: [
            FlowRule(name: "everyone", match: RuleMatch(), response: .message(name: "winback"), location: Fixtures.at("flow.yaml", 3)),
            FlowRule(name: "later", match: RuleMatch(products: ["yearly"]), response: .none, location: Fixtures.at("flow.yaml", 6)),
        ], location: Fixtures.at("flow.yaml")))
        let codes = ManifestValidator.check(manifests).diagnostics.map(\.code)
        #expect(codes.contains("unreachable-rule"))
    }

    @Test("a match keeps one condition of each kind, in one order, however it was built")
    func aMatchIsCanonical() {
        let written = RuleMatch([.split(TrafficSplit(group: "g", percent: 10)), .products(["a"]), .locales(["en-US"])])
        var built = RuleMatch(products: ["b"], locales: ["en-US"])
        built.split = TrafficSplit(group: "g", percent: 10)
        built.products = ["a"]
        #expect(written == built)
        #expect(written.conditions.map(\.kind) == [.products, .locales, .split])
    }
}
