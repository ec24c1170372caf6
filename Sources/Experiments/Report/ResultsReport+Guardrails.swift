import Foundation

extension ResultsReport {
    /// Checks every arm of each group with guardrails against them, and warns of each one crossed.
    static func checkGuardrails(_ comparisons: [SplitComparison], by guardrails: [ResultsConfiguration.Guardrail],
                      warnings: inout [String]) -> [SplitComparison] {
        guard !guardrails.isEmpty else { return comparisons }
        return comparisons.map { comparison in
            let mine = guardrails.filter { $0.flow == comparison.flow && $0.group == comparison.splitGroup }
            guard !mine.isEmpty, let control = comparison.control else { return comparison }
            var checked = comparison
            var checks: [GuardrailCheck] = []
            for arm in comparison.arms {
                for guardrail in mine { checks += check(arm, guardrail) }
            }
            checked.guardrails = checks
            for check in checks where check.crossed {
                warnings.append("\(comparison.flow) split group \(comparison.splitGroup): guardrail crossed — \(sentence(check, control: control)); "
                                + "retention-sync promote \(comparison.splitGroup) proposes stopping it")
            }
            return checked
        }
    }

    /// One arm against one guardrail: one check for a rate, one per currency for money.
    static func check(_ arm: ArmComparison, _ guardrail: ResultsConfiguration.Guardrail) -> [GuardrailCheck] {
        func rate(_ difference: Difference) -> GuardrailCheck {
            let high = difference.interval.map { $0.high * 100 }
            return GuardrailCheck(rule: arm.rule, metric: guardrail.metric, maxDrop: guardrail.maxDrop, currency: nil, upperEnd: high,
                                  crossed: high.map { $0 < -guardrail.maxDrop } ?? false)
        }
        switch guardrail.metric {
        case "renewed": return [rate(arm.renewed)]
        case "kept24h": return [rate(arm.kept24h)]
        default:
            return arm.paidPerCustomer.keys.sorted().map { currency in
                let high = arm.paidPerCustomer[currency]?.interval.map { $0.high / 1000 }
                return GuardrailCheck(rule: arm.rule, metric: guardrail.metric, maxDrop: guardrail.maxDrop, currency: currency, upperEnd: high,
                                      crossed: high.map { $0 < -guardrail.maxDrop } ?? false)
            }
        }
    }

    /// `upsell-yearly renewed more than 2 points below upsell-control (at most −2.5)`.
    public static func sentence(_ check: GuardrailCheck, control: String) -> String {
        let limit = check.maxDrop == check.maxDrop.rounded() ? String(Int(check.maxDrop)) : String(check.maxDrop)
        let what: String
        switch check.metric {
        case "renewed": what = "renewed"
        case "kept24h": what = "kept at 24 h"
        default: what = "paid per customer (\(check.currency ?? ""))"
        }
        let unit = check.metric == "paid" ? "" : " points"
        let bound = check.upperEnd.map { ", the interval's upper end at " + (($0 * 10).rounded() / 10).formatted(signed: true) + unit } ?? ""
        return "\(check.rule) \(what) \(check.crossed ? "is" : "is not") distinguishably more than \(limit)\(unit) below \(control)\(bound)"
    }
}

private extension Double {
    func formatted(signed: Bool) -> String {
        SignedNumber.text(self, digits: 1, signed: signed)
    }
}
