import Basics
import CLIKit
import EventStore
import Experiments
import Foundation
import Operations
import Reconciler
import RetentionMessagingModels
import Runtime
import StateStore

extension DemoStory {
    /// The rule step 12 proposes: customers whose renewal is failing see the plain message instead of
    /// an upsell — they are leaving because a card failed, not by choice.
    static let paymentFailingRule = """
          - name: payment-failing
            match:
              products: [com.example.stillpoint.monthly]
              customer: { billing: [retry, grace] }
            response: { message: before-you-go }

        """

    /// Step 12: the customer facts the month's notifications signed, published for serve; a rule that
    /// uses them, planned and previewed for a customer in billing retry, one paying normally, and one
    /// nothing is known of; then reverted, as a pull request left unmerged.
    func answerThePerson(pseudonyms: PseudonymKey, events: URL) async throws(CommandError) {
        heading(12, "Answer the person: what Apple signed about each customer becomes facts a rule can ask about")
        try await publishFacts(pseudonyms: pseudonyms, events: events)

        let flow = manifestsURL.appendingPathComponent("cancel-flow.yaml")
        let original: Data
        do { original = try Data(contentsOf: flow) } catch { throw CommandError("demo: cannot read \(flow.path): \(error)") }
        let text = String(decoding: original, as: UTF8.self)
        guard let anchor = text.range(of: "  - name: upsell-yearly\n") else {
            throw CommandError("demo: cancel-flow.yaml has no upsell-yearly rule to put the new rule before")
        }
        let edited = text.replacingCharacters(in: anchor.lowerBound..<anchor.lowerBound, with: Self.paymentFailingRule)
        do { try Data(edited.utf8).write(to: flow) } catch { throw CommandError("demo: cannot edit \(flow.path): \(error)") }
        console.print("added to cancel-flow.yaml, before the experiment:\n" + Self.paymentFailingRule.split(separator: "\n").map { "  " + $0 }.joined(separator: "\n"))
        try git?.commit("Payment failing: the plain message, not an upsell", all: true)

        shell("retention-sync plan --env sandbox --snapshot-out planned.json")
        let planned: RuntimeSnapshot
        do {
            let outcome = try await PlanOperation.plan(PlanRequest(environment: reconcileTarget(.sandbox)), context: quiet, provider: provider)
            guard let snapshot = outcome.planned.snapshot?.snapshot else { throw CommandError("the plan has no snapshot") }
            planned = snapshot
            try planned.encoded().write(to: root.appendingPathComponent("planned.json"))
        } catch {
            throw CommandError("demo: cannot plan the new rule: \(error)")
        }
        let rule = planned.rules.first { $0.id == "cancel-flow/payment-failing" }
        try expect(rule?.match.customer?.billing == [.retry, .grace], "the planned snapshot to carry the rule's customer conditions")
        console.print("the plan publishes rule payment-failing with its condition: match.customer.billing: retry, grace")

        try previewThreeCustomers(planned)

        if let git {
            shell("git revert --no-edit HEAD")
            try git.run(["revert", "--no-edit", "HEAD"])
        } else {
            do { try original.write(to: flow) } catch { throw CommandError("demo: cannot restore \(flow.path): \(error)") }
        }
        console.print("reverted: left as a pull request. Merged, the reconcile job applies it, publishes the facts after each outcomes pull, "
                      + "and every serve replica answers each customer by what Apple signed about them (docs/targeting.md).")
    }

    /// `facts publish` over the month's events, as the reconcile job runs it.
    private func publishFacts(pseudonyms: PseudonymKey, events: URL) async throws(CommandError) {
        shell("retention-sync facts publish --env sandbox --events manifests/.retention-sync")
        let summary: FactsBuild.Summary
        do {
            summary = try await FactsBuild.publish(from: FolderEventSource(root: events), bundleId: bundleId,
                                                   environment: Environment.sandbox.rawValue, keyId: pseudonyms.keyId, retainSince: nil,
                                                   builtAt: UTCTime(now: clock).milliseconds, to: FolderObjectStore(root: events)).summary
        } catch {
            throw CommandError("demo: cannot publish the customer facts: \(error)")
        }
        console.print("facts publish (sandbox): \(Self.count(summary.customers)) customer(s) from \(Self.count(summary.events)) "
                      + "outcome event(s) → manifests/.retention-sync/\(FactsPointer.folder(environment: "sandbox")); every serve replica loads it at its next poll")
        try expect(summary.customers == Self.simulatedCustomers, "a fact for every simulated customer")
    }

    /// `decide --customer` for a monthly subscriber in the upsell's half, three ways: billing retry,
    /// paying normally, and nothing known.
    private func previewThreeCustomers(_ planned: RuntimeSnapshot) throws(CommandError) {
        var transaction = "2000000000000001"
        if let split = planned.rules.first(where: { $0.id == "cancel-flow/upsell-yearly" })?.match.split {
            for candidate in 2_000_000_000_000_001...2_000_000_000_100_000 {
                let bucket = TrafficBucket.bucket(salt: split.salt, originalTransactionId: String(candidate))
                if bucket >= split.lowerBucket && bucket < split.upperBucket { transaction = String(candidate); break }
            }
        }
        let request = DecodedRealtimeRequestBody(originalTransactionId: transaction, appAppleId: planned.appAppleId ?? 0,
                                                 productId: "com.example.stillpoint.monthly", userLocale: "en-US",
                                                 requestIdentifier: "7c3f9c1e-1b1d-4e55-9d55-3f1d2f6b8a11",
                                                 environment: Environment.sandbox.appleName, signedDate: Int64(clock.now() * 1000))
        do { try CanonicalJSON.encodePretty(request).write(to: root.appendingPathComponent("request.json")) } catch {
            throw CommandError("demo: cannot write the request: \(error)")
        }
        let engine = DecisionEngine(snapshot: planned, offerSigning: { _, _, _ in DecideOperation.unsignedPreview })
        for (written, expected) in [("billing=retry", "cancel-flow/payment-failing"), ("billing=none", "cancel-flow/upsell-yearly"),
                                    (nil, "cancel-flow/upsell-yearly")] {
            shell("retention-sync decide --snapshot planned.json --request request.json" + (written.map { " --customer \($0)" } ?? ""))
            let facts: CustomerFacts?
            do { facts = try written.map { text throws(CustomerFactsSpec.Refusal) in try CustomerFactsSpec.parse(text, signedDate: request.signedDate) } } catch {
                throw CommandError("demo: \(error.description)")
            }
            let answered: String?
            do {
                answered = try engine.decide(request, customer: facts).answered?.ruleId
                _ = try DecideOperation.run(request, customer: facts, snapshot: planned, credentials: nil, explain: false,
                                            manifestsPath: "manifests", context: context)
            } catch {
                throw CommandError("demo: decide failed: \(error)")
            }
            try expect(answered == expected, "\(written ?? "a customer nothing is known of") to be answered by \(expected) (it was \(answered ?? "no rule"))")
            console.print("→ \(written.map { "a customer with \($0)" } ?? "a customer nothing is known of (a condition on an unknown fact does not hold)"): rule \(expected)")
        }
    }
}
