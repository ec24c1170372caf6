public import Experiments
import Foundation

extension ResultsReport {
    /// The terminal view: one block per flow, then one line per comparison.
    public func text() -> String {
        var lines = ["Results for \(environment) as of \(now)\(since.map { " since \($0)" } ?? "")\(flow.map { ", flow \($0)" } ?? "")"]
        if rows.isEmpty {
            lines.append("No customer was exposed to a rule in this window.")
        }
        let header = ["RULE", "ARM", "EXPOSED", "KEPT 24 H", "TOOK OFFER", "RENEWED"]
        for flowName in orderedFlows {
            lines.append("")
            lines.append(flowName)
            let table = rows.filter { $0.flow == flowName }.map { row in
                [row.rule + (row.splitControl ? " (control)" : "") + (shownPeriod(row).map { ", \($0)" } ?? ""), row.arm ?? "-", Self.count(row.exposed),
                 Self.describe(row.kept24h), row.tookOffer.map(Self.describe) ?? "-", Self.describe(row.renewed)]
            }
            lines += Self.align([header] + table).map { "  " + $0 }
            let money = moneyTable(flow: flowName)
            if !money.isEmpty {
                lines.append("")
                lines += Self.align([moneyHeader.map { $0.uppercased() }] + money).map { "  " + $0 }
            }
            if let note = moneyPendingNote(flow: flowName) {
                lines.append("")
                lines.append("  \(note)")
            }
            lines += retentionLines(flow: flowName)
            let reached = otherLayerLines(flow: flowName)
            if !reached.isEmpty {
                lines.append("")
                lines += reached.map { "  \($0)" }
            }
        }
        if let breakdown, let breakdownRows, !breakdownRows.isEmpty {
            lines.append("")
            lines.append("By \(breakdown.rawValue)")
            let table = breakdownRows.map { row in
                ["\(row.flow)/\(row.rule)", row.valueName ?? row.value ?? "-", Self.count(row.exposed), Self.describe(row.kept24h), Self.describe(row.renewed)]
            }
            lines += Self.align([["RULE", breakdown.rawValue.uppercased(), "EXPOSED", "KEPT 24 H", "RENEWED"]] + table).map { "  " + $0 }
            let segmentLines = segmentSentences()
            if !segmentLines.isEmpty {
                lines.append("")
                lines.append("  Within each \(breakdown.rawValue), each arm against its control (\(segmentMethodPhrase)):")
                lines += segmentLines.map { "    " + $0 }
            }
        }
        for comparison in comparisons {
            lines.append("")
            lines.append("Split group \(comparison.flow)/\(comparison.splitGroup)\(periodPhrase(comparison)): \(Self.controlPhrase(comparison))")
            if let recommendation = comparison.recommendation {
                lines.append("  → \(recommendation)")
            }
            if let sampleRatio = comparison.sampleRatio {
                lines.append("  sample ratio: \(Self.sampleRatioSentence(sampleRatio))")
            }
            for check in comparison.guardrails ?? [] {
                lines.append("  guardrail \(check.crossed ? "CROSSED" : "holds"): \(ResultsReport.sentence(check, control: comparison.control ?? "-"))")
            }
            for arm in comparison.arms {
                var line = "  \(arm.rule) vs \(comparison.control ?? "-"): kept at 24 h \(Self.sentence(arm.kept24h)); renewed \(Self.sentence(arm.renewed))"
                if let paid = paidSentence(arm.paidPerCustomer) { line += "; \(paid)" }
                lines.append(line)
                if let adjusted = Self.adjustedSentence(arm) { lines.append("    \(adjusted)") }
            }
            if let verdictWarning = comparison.verdictWarning {
                lines.append("  warning: \(verdictWarning)")
            }
        }
        lines += (pooledBlocks() + versusBlocks()).flatMap { block in ["", block.heading] + block.lines.map { "  " + $0 } }
        for warning in warnings {
            lines.append("")
            lines.append("warning: \(warning)")
        }
        lines.append("")
        lines.append("Rates: \(method.rateInterval). Differences: 95% always-valid intervals (valid however often you look); a winner only when the interval excludes 0.")
        lines.append("")
        lines.append("Legend")
        lines += Self.align(legend.map { [$0.term, $0.meaning] }).map { "  " + $0 }
        return lines.joined(separator: "\n") + "\n"
    }

    /// What every word of the report means, for the people who decide (the manual has the exact definitions).
    var legend: [(term: String, meaning: String)] {
        let days = method.paidHorizonDays
        return [
            ("exposed", "customers the rule answered in the window, each counted once, at their first answer; the rates below are of them"),
            ("control", "the arm the others are compared with: the one marked control in the manifests, else the arm answering none; "
                + "a holdout is a control that answers none, so its customers see App Store Connect's layer or the default message"),
            ("sample ratio", "whether each split group's arms got the shares of customers the layout gives them (a chi-square test); a "
                + "mismatch at p < 0.001 means customers reached the arms unevenly, and the group's verdicts cannot be trusted"),
            ("kept 24 h", "did not turn auto-renew off within 24 hours of seeing the rule's answer"),
            ("took offer", "redeemed the promotional offer, or switched to the alternate product, before the renewal deadline"),
            ("renewed", "renewed before the renewal deadline: the end of the period current at the answer, plus 7 days"),
            ("pending", "not decided yet (inside those 24 hours, or before the deadline): in no rate"),
            ("≥ a and ≤ b", "while fewer are decided than pending: the rate of all exposed if every pending customer fails (a) or succeeds (b), "
                + "for certain; the decided alone are no fair sample yet, since those who act decide at once"),
            ("(a–b)", "the 95% interval: the true rate lies in it 19 times in 20"),
            ("higher/lower", "said only when the always-valid 95% interval on the difference excludes 0, which keeps the chance of a false winner in a split group under 5% however often you look; until then the arms are not yet told apart"),
            ("paid per customer", "every price the App Store charged the customer in the \(days) days after the answer (offer redemptions, "
                + "renewals, switches; each charge once), averaged over the customers whose \(days) days and \(method.paymentLagDays) more "
                + "for late notifications have passed; prices the customer paid, before Apple's commission and taxes — App Store Connect's "
                + "reports are the record for finance"),
            ("discount given", "for the customers who took an offer: the regular price less the offer's price — what the offer cost, shown "
                + "for information; it is already inside paid, never subtracted from it"),
            ("App Store Connect retention offer", "an offer of the retention layer App Store Connect configures (offerType 5), redeemed after "
                + "the answer: Apple shows that layer when the answer is none, late or failed"),
            ("adjusted", "the same difference over the same decided customers, corrected for what serve knew of them before the answer "
                + "(storefront, tenure band, a recent offer, billing state): regression adjustment, the regression form of CUPED; its "
                + "interval is always valid as the plain one's is, and narrower when those facts predict the outcome; the verdicts read "
                + "the plain difference"),
            ("still subscribed", "the share of a rule's exposed customers still subscribed that many days after the answer "
                + "(Kaplan–Meier): lost at a refund, a revocation, an expiry, or a period not renewed within 7 days; a customer "
                + "observed for less time (exposed recently, or waiting on a renewal) counts until then, neither lost nor kept after"),
            ("period", "one configuration of a split group (its arms and shares); a change of shares, arms or control starts the next, and each customer counts once, in the arm and period of their first exposure"),
            ("confirmatory/exploratory", "a segment comparison is confirmatory when its period's layout declares the breakdown — the "
                + "manifest's segments:, in force before its decisions were made — and is then adjusted (Holm) with the other confirmatory "
                + "comparisons only; every other segment comparison is exploratory, adjusted with the exploratory ones: a lead to test, not a finding"),
            ("vs ARM", "with --versus ARM, each other arm of ARM's group against ARM instead of the control, per period, with the "
                + "group's always-valid interval"),
            ("all periods (stratified)", "an arm against the control with a group's periods combined: within each period against that "
                + "period's control, the periods weighted by the inverse of their variances; beside the per-period comparisons, which "
                + "alone decide the verdicts and the recommendation"),
        ]
    }

    /// `Holm-adjusted over 8 comparisons`: how the segment verdicts are adjusted, for the views — each
    /// family (confirmatory, exploratory) on its own.
    var segmentMethodPhrase: String {
        let all = segmentComparisons ?? []
        let confirmatory = all.filter(\.confirmatory).reduce(0) { $0 + $1.arms.count }
        let exploratory = all.filter { !$0.confirmatory }.reduce(0) { $0 + $1.arms.count }
        func comparisons(_ count: Int) -> String { "\(count) comparison\(count == 1 ? "" : "s")" }
        let families: String
        if confirmatory == 0 {
            families = "Holm-adjusted over \(comparisons(exploratory)) per metric, all exploratory (no period declares this breakdown in the manifest's segments:)"
        } else if exploratory == 0 {
            families = "Holm-adjusted over \(comparisons(confirmatory)) per metric, all confirmatory (declared in the manifest's segments: before the period)"
        } else {
            families = "Holm-adjusted per metric over the \(comparisons(confirmatory)) confirmatory (declared in the manifest's segments: before "
                + "the period) and, apart, over the \(comparisons(exploratory)) exploratory"
        }
        return families + ": a direction is named only when it holds for all of its family at once"
    }

    /// One sentence per segment arm: `DEU, half-price vs keep-message (confirmatory): kept at 24 h higher, …; renewed …`.
    func segmentSentences() -> [String] {
        (segmentComparisons ?? []).flatMap { segment in
            segment.arms.map { arm in
                "\(segment.valueName ?? segment.value)\(segment.splitLayout.flatMap { groupsWithPeriods.contains("\(segment.flow)/\(segment.splitGroup)") ? ", " + (Self.periodLabel($0, since: segment.periodSince) ?? "") : nil } ?? ""), "
                    + "\(arm.rule) vs \(segment.control ?? "-") (\(segment.confirmatory ? "confirmatory" : "exploratory")): "
                    + "kept at 24 h \(Self.sentence(arm.kept24h)); renewed \(Self.sentence(arm.renewed))"
            }
        }
    }

    /// `--versus ARM`: per period of ARM's group, a heading and one sentence per other arm against ARM.
    func versusBlocks() -> [(heading: String, lines: [String])] {
        (versus ?? []).map { block in
            let heading = "Split group \(block.flow)/\(block.splitGroup)"
                + periodPhrase(flow: block.flow, group: block.splitGroup, layout: block.splitLayout, since: block.periodSince)
                + ": vs \(block.reference)"
            let lines = block.arms.isEmpty ? ["no other arm in this period"] : block.arms.map { arm in
                var line = "\(arm.rule) vs \(block.reference): kept at 24 h \(Self.sentence(arm.kept24h)); renewed \(Self.sentence(arm.renewed))"
                if let paid = paidSentence(arm.paidPerCustomer) { line += "; \(paid)" }
                return line
            }
            return (heading, lines)
        }
    }

    /// A group's periods combined: a heading and, per arm, its sentence and the periods' weights.
    func pooledBlocks() -> [(heading: String, lines: [String])] {
        (pooled ?? []).map { block in
            let heading = "Split group \(block.flow)/\(block.splitGroup), \(block.label): control \(block.control), \(block.method)"
            let lines = block.arms.flatMap { arm -> [String] in
                var line = "\(arm.rule) vs \(block.control), \(block.label): kept at 24 h \(Self.sentence(arm.kept24h)); "
                    + "renewed \(Self.sentence(arm.renewed))"
                if let paid = paidSentence(arm.paidPerCustomer) { line += "; \(paid)" }
                let weights = arm.periods.map { period in
                    func share(_ weight: Double?) -> String { weight.map { String(format: "%.0f%%", $0 * 100) } ?? "-" }
                    let label = Self.periodLabel(period.splitLayout, since: period.periodSince) ?? "period before layouts were recorded"
                    return "\(label) \(share(period.kept24hWeight)) / \(share(period.renewedWeight))"
                }
                return [line, "  weights (kept at 24 h / renewed): " + weights.joined(separator: ", ")]
            }
            return (heading, lines)
        }
    }

    /// Per rule, what reached its customers besides its own answer: App Store Connect's retention
    /// offers, and Apple's fallback after an answer later than 700 ms. Empty when nothing did.
    func otherLayerLines(flow flowName: String) -> [String] {
        rows.filter { $0.flow == flowName && ($0.answeredLate > 0 || $0.tookAppStoreConnectOffer > 0) }.map { row in
            var parts: [String] = []
            if row.tookAppStoreConnectOffer > 0 {
                parts.append("\(Self.count(row.tookAppStoreConnectOffer)) of \(Self.count(row.exposed)) took an App Store Connect retention offer")
            }
            if row.answeredLate > 0 {
                parts.append("\(Self.count(row.answeredLate)) answered after Apple's 700 ms (they saw Apple's fallback)")
            }
            return "\(row.rule)\(shownPeriod(row).map { ", \($0)" } ?? ""): " + parts.joined(separator: "; ")
        }
    }

    /// Said while no customer of the flow has their money decided, so an empty money table is not read as nothing paid.
    func moneyPendingNote(flow flowName: String) -> String? {
        let flowRows = rows.filter { $0.flow == flowName }
        let pending = flowRows.reduce(0) { $0 + $1.paid.pending }
        guard pending > 0, flowRows.allSatisfy({ $0.paid.decided == 0 }) else { return nil }
        let days = method.paidHorizonDays + method.paymentLagDays
        return "Paid per customer: none decided yet — a customer's money is decided \(days) days after their answer (the "
            + "\(method.paidHorizonDays)-day paid horizon and \(method.paymentLagDays) days for late notifications); \(Self.count(pending)) pending."
    }

    var moneyHeader: [String] {
        ["Rule", "Currency", "Paid per customer, \(method.paidHorizonDays) days", "Customers", "Paid in all", "Discount given"]
    }

    /// Rows of the flow's money table: one per rule and currency it was paid in or gave a discount in.
    func moneyTable(flow flowName: String) -> [[String]] {
        var table: [[String]] = []
        for row in rows where row.flow == flowName {
            for currency in Set(row.paid.currencies.keys).union(row.discountGiven.keys).sorted() {
                let amount = row.paid.currencies[currency]
                var customers = "\(Self.count(row.paid.decided)) decided"
                if row.paid.pending > 0 { customers += ", \(Self.count(row.paid.pending)) pending" }
                if let long = amount?.longerThanHorizon, long > 0 {
                    customers += "; \(Self.count(long)) payment\(long == 1 ? "" : "s") for a period over \(method.paidHorizonDays) days "
                        + "(a yearly plan) counted whole"
                }
                table.append([row.rule + (row.splitControl ? " (control)" : "") + (shownPeriod(row).map { ", \($0)" } ?? ""), currency, Self.describe(amount, decided: row.paid.decided),
                              customers, row.paid.decided > 0 ? Self.money(amount?.milliunits ?? 0) : "-",
                              Self.money(row.discountGiven[currency] ?? 0)])
            }
        }
        return table
    }

    /// `7.42 (6.90–7.94)`: the mean paid per decided customer and its 95% interval; `-` before any is decided.
    static func describe(_ amount: Amount?, decided: Int) -> String {
        guard decided > 0 else { return "-" }
        guard let amount else { return "0.00" }
        let mean = money(Int64(amount.perCustomer.rounded()))
        guard let interval = amount.interval else { return mean }
        return "\(mean) (\(money(Int64(interval.low.rounded())))–\(money(Int64(interval.high.rounded()))))"
    }

    /// `+0.61`, `−1.15`: a difference of milliunits as a signed amount.
    static func signedMoney(_ milliunits: Double) -> String {
        (milliunits < 0 ? "−" : "+") + money(Int64(abs(milliunits).rounded()))
    }

    /// Milliunits as an amount with two decimals and thousands separators: `12,345.68`.
    static func money(_ milliunits: Int64) -> String {
        let hundredths = (milliunits >= 0 ? milliunits + 5 : milliunits - 5) / 10
        let whole = abs(hundredths) / 100
        let fraction = abs(hundredths) % 100
        return (hundredths < 0 ? "−" : "") + count(Int(whole)) + "." + (fraction < 10 ? "0" : "") + String(fraction)
    }

    /// `paid per customer (35 days): USD higher, +0.61 (+0.12 to +1.10)`, or nil when nothing was paid.
    public func paidSentence(_ differences: [String: Difference]) -> String? {
        guard !differences.isEmpty else { return nil }
        let parts = differences.keys.sorted().map { currency -> String in
            guard let difference = differences[currency], let value = difference.difference, let interval = difference.interval else {
                return "\(currency) no data yet"
            }
            let range = "\(Self.signedMoney(value)) (\(Self.signedMoney(interval.low)) to \(Self.signedMoney(interval.high)))"
            switch difference.verdict {
            case .better: return "\(currency) higher, \(range)"
            case .worse: return "\(currency) lower, \(range)"
            case .noData: return "\(currency) no data yet"
            case .notDistinguishableYet:
                return "\(currency) not distinguishable yet, \(range)" + (difference.estimateWithheld.map { "; \($0)" } ?? "")
            }
        }
        return "paid per customer (\(method.paidHorizonDays) days): \(parts.joined(separator: ", "))"
    }

    public static func sampleRatioSentence(_ check: SampleRatio) -> String {
        if let note = check.note { return "\(ratioText(check)); \(note)" }
        let p = check.pValue.map(pValueText) ?? ""
        let chi = check.chiSquare.map { String(format: "chi-square %.2f, %d df, ", $0, check.degreesOfFreedom ?? 0) } ?? ""
        return "\(ratioText(check)): \(chi)\(p) — " + (check.mismatch ? "MISMATCH (below \(check.threshold))" : "as configured")
    }

    /// The pull-request comment: a summary line and one line per split group outside the fold, the
    /// tables inside `<details>`.
    public func markdown() -> String {
        var lines: [String] = []
        let exposed = rows.reduce(0) { $0 + $1.exposed }
        lines.append("**Results for \(environment)** as of \(now): \(Self.count(exposed)) customers exposed to \(rulesPhrase) in \(orderedFlows.count) flow\(orderedFlows.count == 1 ? "" : "s").")
        lines.append("")
        for comparison in comparisons {
            var line = "- **\(comparison.flow) / \(comparison.splitGroup)**\(periodPhrase(comparison)): "
            if comparison.control == nil {
                line += comparison.note ?? "no control"
            } else {
                line += comparison.arms.map { arm in
                    "`\(arm.rule)` vs `\(comparison.control ?? "")` kept at 24 h \(Self.sentence(arm.kept24h))"
                }.joined(separator: "; ")
            }
            if let paid = comparison.arms.compactMap({ arm in paidSentence(arm.paidPerCustomer).map { "`\(arm.rule)` \($0)" } })
                .nilIfEmpty {
                line += "; " + paid.joined(separator: "; ")
            }
            lines.append(line)
            if let recommendation = comparison.recommendation {
                lines.append("  - **\(Self.cell(recommendation))**")
            }
            if let sampleRatio = comparison.sampleRatio {
                lines.append("  - \(sampleRatio.mismatch ? ":warning: " : "")sample ratio: \(Self.sampleRatioSentence(sampleRatio))")
            }
            for check in comparison.guardrails ?? [] {
                lines.append("  - \(check.crossed ? ":warning: guardrail **crossed**" : "guardrail holds"): "
                             + Self.cell(ResultsReport.sentence(check, control: comparison.control ?? "-")))
            }
            for arm in comparison.arms {
                if let adjusted = Self.adjustedSentence(arm) { lines.append("  - `\(arm.rule)` \(Self.cell(adjusted))") }
            }
            if let verdictWarning = comparison.verdictWarning {
                lines.append("  - :warning: \(verdictWarning)")
            }
        }
        for warning in warnings {
            lines.append("- :warning: \(warning)")
        }
        lines.append("")
        lines.append("<details><summary>Rates per rule</summary>")
        lines.append("")
        lines.append("| Flow | Rule | Arm | Exposed | Kept 24 h | Took offer | Renewed |")
        lines.append("|---|---|---|---:|---|---|---|")
        for row in rows {
            lines.append("| \(Self.cell(row.flow)) | \(Self.cell(row.rule))\(row.splitControl ? " (control)" : "")\(shownPeriod(row).map { ", " + Self.cell($0) } ?? "") | \(Self.cell(row.arm ?? "-")) | \(Self.count(row.exposed)) | \(Self.describe(row.kept24h)) | \(row.tookOffer.map(Self.describe) ?? "-") | \(Self.describe(row.renewed)) |")
        }
        lines.append("")
        lines.append("</details>")
        for line in orderedFlows.flatMap({ otherLayerLines(flow: $0) }) {
            lines.append("- \(Self.cell(line))")
        }
        for note in orderedFlows.compactMap({ moneyPendingNote(flow: $0) }).prefix(1) {
            lines.append("")
            lines.append(note)
        }
        markdownMoneyAndSegments(into: &lines)
        markdownRetention(into: &lines)
        if !comparisons.isEmpty {
            lines.append("")
            lines.append("<details><summary>Comparisons with the control</summary>")
            lines.append("")
            lines.append("| Flow / group | Arm | Control | Kept 24 h difference | Renewed difference |")
            lines.append("|---|---|---|---|---|")
            for comparison in comparisons {
                for arm in comparison.arms {
                    lines.append("| \(Self.cell(comparison.flow)) / \(Self.cell(comparison.splitGroup))\(Self.cell(periodPhrase(comparison))) | \(Self.cell(arm.rule)) | \(Self.cell(comparison.control ?? "-")) (\(comparison.controlKind ?? "")) | \(Self.sentence(arm.kept24h)) | \(Self.sentence(arm.renewed)) |")
                }
            }
            lines.append("")
            lines.append("</details>")
        }
        markdownPooledAndVersus(into: &lines)
        lines.append("")
        lines.append("**How to read this**: " + legend.map { "*\($0.term)*: \($0.meaning)" }.joined(separator: "; ") + ".")
        return lines.joined(separator: "\n") + "\n"
    }

    /// The pull-request comment's folded pooled (all periods) and arm-against-arm comparisons.
    private func markdownPooledAndVersus(into lines: inout [String]) {
        let blocks = pooledBlocks() + versusBlocks()
        guard !blocks.isEmpty else { return }
        let titles = [pooled == nil ? nil : "All periods (stratified)", versus?.isEmpty == false ? "Arm against arm" : nil].compactMap { $0 }
        lines.append("")
        lines.append("<details><summary>\(titles.joined(separator: " and "))</summary>")
        for block in blocks {
            lines.append("")
            lines.append("**\(Self.cell(block.heading))**")
            lines.append("")
            lines += block.lines.map { ($0.hasPrefix("  ") ? "  - " : "- ") + Self.cell($0.trimmingCharacters(in: .whitespaces)) }
        }
        lines.append("")
        lines.append("</details>")
    }

    /// The pull-request comment's folded money table and segment comparisons.
    private func markdownMoneyAndSegments(into lines: inout [String]) {
        let moneyRows = orderedFlows.flatMap { flowName in moneyTable(flow: flowName).map { [flowName] + $0 } }
        if !moneyRows.isEmpty {
            lines.append("")
            lines.append("<details><summary>Money per rule</summary>")
            lines.append("")
            lines.append("| Flow | " + moneyHeader.joined(separator: " | ") + " |")
            lines.append("|---|---|---|---|---|---:|---:|")
            for row in moneyRows {
                lines.append("| " + row.map(Self.cell).joined(separator: " | ") + " |")
            }
            lines.append("")
            lines.append("</details>")
        }
        let segmentLines = segmentSentences()
        if let breakdown, !segmentLines.isEmpty {
            lines.append("")
            lines.append("<details><summary>Within each \(breakdown.rawValue)</summary>")
            lines.append("")
            lines.append("Each arm against its control in each \(breakdown.rawValue), \(segmentMethodPhrase).")
            lines.append("")
            lines += segmentLines.map { "- " + Self.cell($0) }
            lines.append("")
            lines.append("</details>")
        }
    }

    /// `15 rules` or `6 rules (15 rows over their periods)`: rules counted once however many periods
    /// of a split group they have rows in.
    var rulesPhrase: String {
        let rules = Set(rows.map { [$0.flow, $0.rule] }).count
        let phrase = "\(Self.count(rules)) rule\(rules == 1 ? "" : "s")"
        return rows.count == rules ? phrase : phrase + " (\(Self.count(rows.count)) rows over their periods)"
    }

    var orderedFlows: [String] {
        Array(Set(rows.map(\.flow))).sorted()
    }

    static func percent(_ value: Double) -> String {
        String(format: "%.1f%%", value * 100)
    }

    static func points(_ value: Double) -> String {
        SignedNumber.text(value * 100, digits: 1)
    }

    public static func describe(_ rate: Rate) -> String {
        if rate.early, let bounds = rate.bounds {
            // No estimate yet: where the rate of these customers will end up, for certain.
            let exposed = rate.successes + rate.failures + rate.pending
            return "≥ \(percent(bounds.low)) and ≤ \(percent(bounds.high)): \(count(rate.successes)) of \(count(exposed)), \(count(rate.pending)) pending"
        }
        guard let value = rate.rate, let interval = rate.interval else {
            return rate.pending > 0 ? "pending (\(count(rate.pending)))" : "-"
        }
        var text = "\(percent(value)) (\(percent(interval.low))–\(percent(interval.high))) of \(count(rate.successes + rate.failures))"
        if rate.pending > 0 { text += ", \(count(rate.pending)) pending" }
        return text
    }

    public static func sentence(_ difference: Difference) -> String {
        guard let value = difference.difference, let interval = difference.interval else { return "no data yet" }
        let range = "\(points(value)) points (\(points(interval.low)) to \(points(interval.high)))"
        let relative = difference.relative.map { ", \(SignedNumber.percent($0)) relative" } ?? ""
        switch difference.verdict {
        case .better: return "higher, \(range)\(relative)"
        case .worse: return "lower, \(range)\(relative)"
        case .noData: return "no data yet"
        case .notDistinguishableYet:
            if let withheld = difference.estimateWithheld {
                return "not distinguishable yet, \(range); \(withheld)"
            }
            if let more = difference.moreCustomersPerArm {
                return "not distinguishable yet, \(range); about \(count(more)) more customers per arm at the current rates"
            }
            return "not distinguishable yet, \(range)"
        }
    }

    /// Split groups (`flow/group`) whose customers the window shows under more than one layout: only
    /// there do rows and comparisons name their period (the JSON always has it).
    var groupsWithPeriods: Set<String> {
        var layouts: [String: Set<String>] = [:]
        for row in rows {
            guard let group = row.splitGroup else { continue }
            layouts["\(row.flow)/\(group)", default: []].insert(row.splitLayout ?? "")
        }
        return Set(layouts.filter { $0.value.count > 1 }.keys)
    }

    func shownPeriod(_ row: Row) -> String? {
        guard let group = row.splitGroup, groupsWithPeriods.contains("\(row.flow)/\(group)") else { return nil }
        return row.periodLabel ?? "period before layouts were recorded"
    }

    /// ` (period 45/45/10 since …: arm-a 45% (control), arm-b 45%, holdout 10%)` for a group seen in
    /// several periods; empty otherwise.
    func periodPhrase(_ comparison: SplitComparison) -> String {
        periodPhrase(flow: comparison.flow, group: comparison.splitGroup, layout: comparison.splitLayout, since: comparison.periodSince)
    }

    func periodPhrase(flow: String, group: String, layout: String?, since: String?) -> String {
        guard groupsWithPeriods.contains("\(flow)/\(group)") else { return "" }
        guard let layout, let label = Self.periodLabel(layout, since: since) else {
            return " (period before layouts were recorded)"
        }
        return " (\(label): \(Self.layoutText(layout)))"
    }

    static func controlPhrase(_ comparison: SplitComparison) -> String {
        switch comparison.controlKind {
        case "splitControl"?: "control \(comparison.control ?? "") (marked in the manifest)"
        case "holdout"?: "control \(comparison.control ?? "") (answers none: the holdout)"
        default: comparison.note ?? "no control"
        }
    }

    static func cell(_ text: String) -> String {
        text.replacingOccurrences(of: "|", with: "\\|")
    }

    static func align(_ table: [[String]]) -> [String] {
        guard let width = table.first?.count else { return [] }
        let widths = (0 ..< width).map { column in table.map { $0[column].count }.max() ?? 0 }
        return table.map { row in
            row.enumerated().map { index, cell in
                index == width - 1 ? cell : cell.padding(toLength: widths[index], withPad: " ", startingAt: 0)
            }.joined(separator: "  ")
        }
    }
}

extension Array {
    var nilIfEmpty: Self? { isEmpty ? nil : self }
}
