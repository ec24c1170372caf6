public import Experiments
import Basics
import EventContract
import Foundation

extension ResultsReport {
    /// The policy of the page: nothing fetched, no script; inline styles and `data:` images only (the
    /// same as the sheet preview's).
    public static let htmlContentSecurityPolicy = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"

    /// The results as one self-contained page: per split group (and period) the charts — each arm's
    /// kept-at-24-h rate with its interval, the always-valid kept-at-24-h and renewed differences from
    /// the control day by day, took offer day by day, exposures per arm per day, paid per customer per
    /// arm with its interval, each arm's retention curve with a table — drawn as inline SVG, then
    /// the same tables, sentences, warnings and legend as the text view. No script, nothing fetched;
    /// every string from the events or manifests is escaped. The same report and timeline give the
    /// same bytes.
    public func html(timeline: ResultsTimeline) -> String {
        var page = HTMLPage()
        let title = "Results for \(environment)"
        page.line("<!DOCTYPE html>")
        page.line("<html lang=\"en\">")
        page.line("<head>")
        page.line("<meta charset=\"utf-8\">")
        page.line("<meta http-equiv=\"Content-Security-Policy\" content=\"\(Self.htmlContentSecurityPolicy)\">")
        page.line("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">")
        page.line("<title>\(esc(title)) as of \(esc(now))</title>")
        page.line("<style>\n\(ResultsHTMLStyle.css)</style>")
        page.line("</head>")
        page.line("<body>")
        page.line("<h1>\(esc(title))</h1>")
        let exposed = rows.reduce(0) { $0 + $1.exposed }
        page.line("<p class=\"meta\">As of \(esc(now))\(since.map { " since \(esc($0))" } ?? "")\(flow.map { ", flow \(esc($0))" } ?? ""): "
                  + "\(Self.count(exposed)) customers exposed to \(esc(rulesPhrase)); "
                  + "\(Self.count(events.decisions)) decisions and \(Self.count(events.outcomes)) outcomes read from \(Self.count(events.segments)) segments.</p>")
        if rows.isEmpty {
            page.line("<p>No customer was exposed to a rule in this window.</p>")
        }
        if !warnings.isEmpty {
            page.line("<section class=\"warnings\" aria-label=\"Warnings\">")
            page.line("<h2>Warnings</h2>")
            page.line("<ul>")
            for warning in warnings { page.line("<li>warning: \(esc(warning))</li>") }
            page.line("</ul>")
            page.line("</section>")
        }
        for (index, comparison) in comparisons.enumerated() {
            groupSection(comparison, index: index, timeline: timeline, into: &page)
        }
        for (kind, blocks) in [("pooled", pooledBlocks()), ("versus", versusBlocks())] {
            for block in blocks {
                page.line("<section class=\"group \(kind)\">")
                page.line("<h2>\(esc(block.heading))</h2>")
                page.line("<ul class=\"sentences\">")
                for line in block.lines {
                    let indented = line.hasPrefix("  ")
                    page.line("<li\(indented ? " class=\"adjusted\"" : "")>\(esc(line.trimmingCharacters(in: .whitespaces)))</li>")
                }
                page.line("</ul>")
                page.line("</section>")
            }
        }
        tables(into: &page)
        page.line("<section class=\"legend\">")
        page.line("<h2>How to read this</h2>")
        page.line("<p>Rates: \(esc(method.rateInterval)). Differences: 95% always-valid intervals (valid however often you look); a winner only when the interval excludes 0.</p>")
        page.line("<dl>")
        for entry in legend {
            page.line("<dt>\(esc(entry.term))</dt><dd>\(esc(entry.meaning))</dd>")
        }
        page.line("</dl>")
        page.line("<p class=\"muted\">Charts: a dot is the rate, its bar the 95% interval. Over time (kept at 24 h, renewed, took offer): the value at the end of each UTC day as a report run then would have said it, the band or bar its interval (always-valid for differences), a dashed bar without a dot where it will end while most are still pending, the last point this report. Retention: the share of each arm&#39;s customers still subscribed by day since the answer, a step line over its pointwise 95% band, the table beside it the same numbers. Drawn by retention-sync from the recorded events; the page runs no script and fetches nothing.</p>")
        page.line("</section>")
        page.line("</body>")
        page.line("</html>")
        return page.text
    }

    // MARK: - Split groups

    private func groupRows(_ comparison: SplitComparison) -> [Row] {
        let group = rows.filter {
            $0.flow == comparison.flow && $0.splitGroup == comparison.splitGroup && $0.splitLayout == comparison.splitLayout
                && $0.periodSince == comparison.periodSince
        }
        // The control first, then the others in the report's order.
        return group.filter { $0.rule == comparison.control } + group.filter { $0.rule != comparison.control }
    }

    private func groupSection(_ comparison: SplitComparison, index: Int, timeline: ResultsTimeline, into page: inout HTMLPage) {
        let arms = groupRows(comparison)
        let colours = Dictionary(arms.enumerated().map { ($0.element.rule, ResultsHTMLStyle.palette[$0.offset % ResultsHTMLStyle.palette.count]) },
                                 uniquingKeysWith: { first, _ in first })
        let id = "group-\(index + 1)"
        page.line("<section class=\"group\" id=\"\(id)\">")
        page.line("<h2>Split group \(esc(comparison.flow)) / \(esc(comparison.splitGroup))\(esc(periodPhrase(comparison)))</h2>")
        page.line("<p>\(esc(Self.controlPhrase(comparison)))</p>")
        if let recommendation = comparison.recommendation {
            page.line("<p class=\"recommendation\">\(esc(recommendation))</p>")
        }
        if let sampleRatio = comparison.sampleRatio {
            page.line("<p class=\"\(sampleRatio.mismatch ? "warning" : "muted")\">sample ratio: \(esc(Self.sampleRatioSentence(sampleRatio)))</p>")
        }
        for check in comparison.guardrails ?? [] {
            page.line("<p class=\"\(check.crossed ? "warning" : "muted")\">guardrail \(check.crossed ? "crossed" : "holds"): "
                      + "\(esc(ResultsReport.sentence(check, control: comparison.control ?? "-")))</p>")
        }
        if let verdictWarning = comparison.verdictWarning {
            page.line("<p class=\"warning\">warning: \(esc(verdictWarning))</p>")
        }
        page.line("<ul class=\"keys\">")
        for arm in arms {
            page.line("<li><span class=\"swatch\" style=\"background:\(colours[arm.rule] ?? "#000")\"></span>\(esc(arm.rule))\(arm.rule == comparison.control ? " (control)" : "")\(arm.arm.map { " — arm \(esc($0))" } ?? "")</li>")
        }
        page.line("</ul>")
        if !comparison.arms.isEmpty {
            page.line("<ul class=\"sentences\">")
            for arm in comparison.arms {
                var line = "\(arm.rule) vs \(comparison.control ?? "-"): kept at 24 h \(Self.sentence(arm.kept24h)); renewed \(Self.sentence(arm.renewed))"
                if let paid = paidSentence(arm.paidPerCustomer) { line += "; \(paid)" }
                page.line("<li>\(esc(line))</li>")
                if let adjusted = Self.adjustedSentence(arm) {
                    page.line("<li class=\"adjusted\">\(esc("\(arm.rule) vs \(comparison.control ?? "-"), \(adjusted)"))</li>")
                }
            }
            page.line("</ul>")
        }
        page.line("<div class=\"charts\">")
        rateChart(arms, comparison: comparison, colours: colours, id: id, into: &page)
        for metric in [ResultsTimeline.Metric.kept24h, .renewed] {
            let series = timeline.differences(comparison, of: metric)
            for arm in comparison.arms {
                if let points = series[arm.rule], !points.isEmpty {
                    differenceChart(points, metric: metric, rule: arm.rule, control: comparison.control ?? "", colour: colours[arm.rule] ?? "#000",
                                    into: &page)
                }
            }
        }
        tookOfferChart(timeline.rates(comparison, of: .tookOffer), arms: arms, colours: colours, into: &page)
        exposureChart(arms, comparison: comparison, timeline: timeline, colours: colours, into: &page)
        paidChart(arms, into: &page)
        retentionChart(arms, comparison: comparison, colours: colours, into: &page)
        page.line("</div>")
        page.line("</section>")
    }

    /// Each arm's kept-at-24-h rate: a dot at the rate, a bar over its interval, on a shared percent axis.
    private func rateChart(_ arms: [Row], comparison: SplitComparison, colours: [String: String], id: String, into page: inout HTMLPage) {
        let decided = arms.compactMap { row in (row.kept24h.early ? row.kept24h.bounds : row.kept24h.interval).map { (row, $0) } }
        let width = 560.0, left = 170.0, right = 540.0, rowHeight = 30.0, top = 12.0
        let height = top + rowHeight * Double(arms.count) + 34
        let low = decided.map { $0.1.low }.min() ?? 0, high = decided.map { $0.1.high }.max() ?? 1
        let axis = ChartAxis.percent(low: low, high: high)
        let x = { (value: Double) in left + (value - axis.low) / (axis.high - axis.low) * (right - left) }
        page.line("<figure class=\"chart\">")
        page.line("<figcaption>Kept at 24 h, each arm: the rate and its 95% interval (dashed, without a dot: where the rate will end, while most are still pending)</figcaption>")
        page.line("<svg class=\"rates\" viewBox=\"0 0 \(n(width)) \(n(height))\" role=\"img\" aria-label=\"Kept at 24 h per arm with 95% intervals\">")
        let bottom = top + rowHeight * Double(arms.count)
        for tick in axis.ticks {
            page.line("<g class=\"tick\" data-value=\"\(n(tick.value, 6))\"><line x1=\"\(n(x(tick.value)))\" y1=\"\(n(top - 6))\" x2=\"\(n(x(tick.value)))\" y2=\"\(n(bottom))\"/><text x=\"\(n(x(tick.value)))\" y=\"\(n(bottom + 16))\" text-anchor=\"middle\">\(tick.label)</text></g>")
        }
        for (index, row) in arms.enumerated() {
            let y = top + rowHeight * (Double(index) + 0.5)
            let label = Self.short(row.rule + (row.rule == comparison.control ? " (control)" : ""))
            page.line("<text class=\"label\" x=\"\(n(left - 10))\" y=\"\(n(y + 4))\" text-anchor=\"end\">\(esc(label))</text>")
            let colour = colours[row.rule] ?? "#000"
            if row.kept24h.early, let bounds = row.kept24h.bounds {
                // No estimate yet: a dashed bar over the bounds, no dot.
                page.line("<line class=\"bounds\" data-rule=\"\(esc(row.rule))\" x1=\"\(n(x(bounds.low)))\" y1=\"\(n(y))\" x2=\"\(n(x(bounds.high)))\" y2=\"\(n(y))\" stroke=\"\(colour)\" stroke-dasharray=\"4 3\"><title>\(esc(row.rule)): \(esc(Self.describe(row.kept24h)))</title></line>")
            } else if let rate = row.kept24h.rate, let interval = row.kept24h.interval {
                page.line("<line class=\"interval\" data-rule=\"\(esc(row.rule))\" x1=\"\(n(x(interval.low)))\" y1=\"\(n(y))\" x2=\"\(n(x(interval.high)))\" y2=\"\(n(y))\" stroke=\"\(colour)\"/>")
                page.line("<circle class=\"rate\" data-rule=\"\(esc(row.rule))\" cx=\"\(n(x(rate)))\" cy=\"\(n(y))\" r=\"5\" fill=\"\(colour)\"><title>\(esc(row.rule)): \(esc(Self.describe(row.kept24h)))</title></circle>")
            } else {
                page.line("<text class=\"pending\" x=\"\(n(left + 4))\" y=\"\(n(y + 4))\">\(esc(Self.describe(row.kept24h)))</text>")
            }
        }
        page.line("<text class=\"axis-title\" x=\"\(n(right))\" y=\"\(n(height - 2))\" text-anchor=\"end\">kept at 24 h</text>")
        page.line("</svg>")
        page.line("</figure>")
    }

    /// The always-valid interval on the arm's difference from the control (kept at 24 h or renewed), at
    /// the end of every day: the band narrows as customers accrue; a line marks the first look it
    /// excluded zero. While either rate is early, a look shows a dashed bar over the bounds of where
    /// the difference will end up, and no dot.
    private func differenceChart(_ points: [ResultsTimeline.Point], metric: ResultsTimeline.Metric, rule: String, control: String, colour: String,
                                 into page: inout HTMLPage) {
        let name = Self.metricName(metric)
        let width = 560.0, left = 56.0, right = 540.0, top = 14.0, bottom = 210.0, height = 252.0
        let values = points.compactMap(\.difference.difference)
        // The scale holds every difference and zero, and the intervals once they are narrower than
        // 50 points; the wider early ones run off the plot (clipped), as they run off any sensible scale.
        let bounds = points.compactMap { point in point.difference.interval.flatMap { $0.high - $0.low <= 0.5 ? $0 : nil } }
        let low = min(0, (values + bounds.map(\.low)).min() ?? -0.1), high = max(0, (values + bounds.map(\.high)).max() ?? 0.1)
        let axis = ChartAxis.points(low: low, high: high)
        let first = points[0].time, last = points[points.count - 1].time
        let x = { (time: Int64) in last == first ? (left + right) / 2 : left + Double(time - first) / Double(last - first) * (right - left) }
        let y = { (value: Double) in bottom - (value - axis.low) / (axis.high - axis.low) * (bottom - top) }
        let clip = "clip-" + Self.identifier(rule + "\u{0}" + control + "\u{0}" + String(first) + "\u{0}" + metric.rawValue)
        page.line("<figure class=\"chart\">")
        page.line("<figcaption>\(esc(rule)) minus \(esc(control)), \(name), day by day: the difference and its always-valid 95% interval "
                  + "(dashed, without a dot: where it will end, while most are still pending)</figcaption>")
        page.line("<svg class=\"difference\" data-metric=\"\(metric.rawValue)\" data-rule=\"\(esc(rule))\" viewBox=\"0 0 \(n(width)) \(n(height))\" role=\"img\" aria-label=\"Difference from the control over time\">")
        page.line("<defs><clipPath id=\"\(clip)\"><rect x=\"\(n(left))\" y=\"\(n(top))\" width=\"\(n(right - left))\" height=\"\(n(bottom - top))\"/></clipPath></defs>")
        for tick in axis.ticks {
            page.line("<g class=\"tick\" data-value=\"\(n(tick.value, 6))\"><line x1=\"\(n(left))\" y1=\"\(n(y(tick.value)))\" x2=\"\(n(right))\" y2=\"\(n(y(tick.value)))\"/><text x=\"\(n(left - 6))\" y=\"\(n(y(tick.value) + 4))\" text-anchor=\"end\">\(tick.label)</text></g>")
        }
        for (index, point) in points.enumerated() where Self.labelled(index, of: points.count) {
            page.line("<text class=\"day\" x=\"\(n(x(point.time)))\" y=\"\(n(bottom + 16))\" text-anchor=\"middle\">\(String(point.day.suffix(5)))</text>")
        }
        let banded = points.filter { $0.difference.interval != nil && $0.bounds == nil }
        if !banded.isEmpty {
            let upper = banded.map { "\(n(x($0.time))),\(n(y($0.difference.interval?.high ?? 0)))" }
            let lower = banded.reversed().map { "\(n(x($0.time))),\(n(y($0.difference.interval?.low ?? 0)))" }
            page.line("<g clip-path=\"url(#\(clip))\">")
            page.line("<polygon class=\"band\" points=\"\((upper + lower).joined(separator: " "))\" fill=\"\(colour)\"/>")
            for point in banded {
                guard let interval = point.difference.interval else { continue }
                page.line("<line class=\"diff-interval\" data-day=\"\(point.day)\" x1=\"\(n(x(point.time)))\" y1=\"\(n(y(interval.low)))\" x2=\"\(n(x(point.time)))\" y2=\"\(n(y(interval.high)))\" stroke=\"\(colour)\"/>")
            }
            page.line("</g>")
        }
        let early = points.filter { $0.bounds != nil }
        if !early.isEmpty {
            page.line("<g clip-path=\"url(#\(clip))\">")
            for point in early {
                guard let bounds = point.bounds else { continue }
                page.line("<line class=\"diff-bounds\" data-day=\"\(point.day)\" x1=\"\(n(x(point.time)))\" y1=\"\(n(y(bounds.low)))\" x2=\"\(n(x(point.time)))\" y2=\"\(n(y(bounds.high)))\" stroke=\"\(colour)\" stroke-dasharray=\"4 3\"><title>\(point.day): no estimate yet, between \(esc(Self.points(bounds.low))) and \(esc(Self.points(bounds.high))) points for certain (\(esc(Self.describe(point.armRate))) against \(esc(Self.describe(point.controlRate))))</title></line>")
            }
            page.line("</g>")
        }
        page.line("<line class=\"zero\" x1=\"\(n(left))\" y1=\"\(n(y(0)))\" x2=\"\(n(right))\" y2=\"\(n(y(0)))\"/>")
        let shown = points.filter { $0.bounds == nil }
        let line = shown.compactMap { point in point.difference.difference.map { "\(n(x(point.time))),\(n(y($0)))" } }
        if line.count > 1 {
            page.line("<polyline class=\"trend\" points=\"\(line.joined(separator: " "))\" stroke=\"\(colour)\"/>")
        }
        for point in shown {
            guard let value = point.difference.difference else { continue }
            page.line("<circle class=\"diff\" data-day=\"\(point.day)\" data-time=\"\(EventTime.format(point.time))\" cx=\"\(n(x(point.time)))\" cy=\"\(n(y(value)))\" r=\"3\" fill=\"\(colour)\"><title>\(point.day): \(esc(Self.sentence(point.difference))) (\(Self.count(point.armDecided)) and \(Self.count(point.controlDecided)) decided)</title></circle>")
        }
        let distinguished = Self.becameDistinguishable(points)
        if let distinguished {
            let at = x(distinguished.time)
            let anchor = at > (left + right) / 2 ? "end" : "start"
            page.line("<line class=\"distinguishable\" data-day=\"\(distinguished.day)\" x1=\"\(n(at))\" y1=\"\(n(top))\" x2=\"\(n(at))\" y2=\"\(n(bottom))\"/>")
            page.line("<text class=\"distinguishable-label\" x=\"\(n(at + (anchor == "end" ? -4 : 4)))\" y=\"\(n(top + 12))\" text-anchor=\"\(anchor)\">distinguishable from \(distinguished.day)</text>")
        }
        page.line("<text class=\"axis-title\" x=\"\(n(left))\" y=\"\(n(height - 4))\">points of \(name), \(esc(Self.short(rule))) minus control</text>")
        page.line("</svg>")
        let verdict = distinguished.map { "Distinguishable from the control from \($0.day) on: the interval has excluded 0 at every look since." }
            ?? "Not distinguishable from the control at the latest look."
        page.line("<p class=\"caption\">\(verdict)</p>")
        page.line("</figure>")
    }

    /// Customers first exposed per arm per UTC day (the last day is cut at `now`): arms drifting apart
    /// from their shares show a sample-ratio problem at a glance.
    private func exposureChart(_ arms: [Row], comparison: SplitComparison, timeline: ResultsTimeline, colours: [String: String],
                               into page: inout HTMLPage) {
        let series = arms.compactMap { row in timeline.arm(flow: row.flow, rule: row.rule, splitLayout: row.splitLayout).map { (row.rule, $0) } }
        // From the first exposure to the report's day: days without exposures show as zeros.
        guard let first = series.flatMap({ $0.1.days.filter { $0.exposed > 0 }.map(\.start) }).min() else { return }
        let last = max(first, ResultsTimeline.dayStart(timeline.now))
        let dayCount = Int((last - first) / EventTime.day) + 1
        let days = (0 ..< dayCount).map { first + Int64($0) * EventTime.day }
        let width = 560.0, left = 56.0, right = 540.0, top = 14.0, bottom = 190.0, height = 230.0
        let peak = series.flatMap { $0.1.days.map(\.exposed) }.max() ?? 1
        let axis = ChartAxis.counts(high: peak)
        let x = { (index: Int) in dayCount == 1 ? (left + right) / 2 : left + Double(index) / Double(dayCount - 1) * (right - left) }
        let y = { (value: Double) in bottom - value / axis.high * (bottom - top) }
        page.line("<figure class=\"chart\">")
        page.line("<figcaption>Customers first exposed per arm per day (UTC; the last day runs to the report&#39;s time)</figcaption>")
        page.line("<svg class=\"exposures\" viewBox=\"0 0 \(n(width)) \(n(height))\" role=\"img\" aria-label=\"Exposures per arm per day\">")
        for tick in axis.ticks {
            page.line("<g class=\"tick\" data-value=\"\(n(tick.value, 6))\"><line x1=\"\(n(left))\" y1=\"\(n(y(tick.value)))\" x2=\"\(n(right))\" y2=\"\(n(y(tick.value)))\"/><text x=\"\(n(left - 6))\" y=\"\(n(y(tick.value) + 4))\" text-anchor=\"end\">\(tick.label)</text></g>")
        }
        for (index, day) in days.enumerated() where Self.labelled(index, of: days.count) {
            page.line("<text class=\"day\" x=\"\(n(x(index)))\" y=\"\(n(bottom + 16))\" text-anchor=\"middle\">\(String(ResultsTimeline.dayText(day).suffix(5)))</text>")
        }
        for (rule, arm) in series {
            let colour = colours[rule] ?? "#000"
            let counts = Dictionary(arm.days.map { ($0.start, $0.exposed) }, uniquingKeysWith: +)
            let points = days.enumerated().map { index, day in (index, day, counts[day] ?? 0) }
            if points.count > 1 {
                page.line("<polyline class=\"exposed-line\" data-rule=\"\(esc(rule))\" points=\"\(points.map { "\(n(x($0.0))),\(n(y(Double($0.2))))" }.joined(separator: " "))\" stroke=\"\(colour)\"/>")
            }
            for (index, day, count) in points {
                page.line("<circle class=\"exposed\" data-rule=\"\(esc(rule))\" data-day=\"\(ResultsTimeline.dayText(day))\" data-count=\"\(count)\" cx=\"\(n(x(index)))\" cy=\"\(n(y(Double(count))))\" r=\"2.5\" fill=\"\(colour)\"><title>\(esc(rule)), \(ResultsTimeline.dayText(day)): \(Self.count(count))</title></circle>")
            }
        }
        page.line("<text class=\"axis-title\" x=\"\(n(left))\" y=\"\(n(height - 4))\">customers first exposed that day</text>")
        page.line("</svg>")
        page.line("</figure>")
    }

    /// Per currency, each arm's paid per decided customer with its 95% interval, on one scale from zero;
    /// the discount the arm's offer-takers were given, as a note (it is inside the amounts paid).
    private func paidChart(_ arms: [Row], into page: inout HTMLPage) {
        let currencies = Set(arms.flatMap { Array($0.paid.currencies.keys) }).sorted()
        for currency in currencies {
            let width = 600.0, left = 150.0, right = 430.0, top = 8.0, rowHeight = 28.0
            let height = top + rowHeight * Double(arms.count) + 26
            let peak = arms.compactMap { $0.paid.currencies[currency].map { max($0.perCustomer, $0.interval?.high ?? 0) } }.max() ?? 0
            let scale = peak > 0 ? (right - left) / peak : 0
            func x(_ milliunits: Double) -> Double { left + max(0, milliunits) * scale }
            page.line("<figure class=\"chart\">")
            page.line("<figcaption>\(esc(currency)): paid per customer in the \(method.paidHorizonDays) days after the answer, with 95% intervals</figcaption>")
            page.line("<svg class=\"paid\" data-currency=\"\(esc(currency))\" viewBox=\"0 0 \(n(width)) \(n(height))\" role=\"img\" aria-label=\"Paid per customer per arm\">")
            for (index, row) in arms.enumerated() {
                let y = top + rowHeight * Double(index) + 12
                page.line("<text class=\"label\" x=\"\(n(left - 10))\" y=\"\(n(y + 4))\" text-anchor=\"end\">\(esc(Self.short(row.rule)))</text>")
                guard row.paid.decided > 0 else {
                    page.line("<text class=\"amount\" x=\"\(n(left))\" y=\"\(n(y + 4))\">pending (\(Self.count(row.paid.pending)))</text>")
                    continue
                }
                let amount = row.paid.currencies[currency]
                let mean = amount?.perCustomer ?? 0
                if let interval = amount?.interval {
                    page.line("<line class=\"paid-interval\" x1=\"\(n(x(interval.low)))\" x2=\"\(n(x(interval.high)))\" y1=\"\(n(y))\" y2=\"\(n(y))\"/>")
                }
                page.line("<circle class=\"paid\" data-rule=\"\(esc(row.rule))\" data-milliunits=\"\(n(mean, 3))\" cx=\"\(n(x(mean)))\" cy=\"\(n(y))\" r=\"4\"/>")
                page.line("<text class=\"amount\" x=\"\(n(right + 8))\" y=\"\(n(y + 4))\">\(esc(Self.describe(amount, decided: row.paid.decided)))</text>")
            }
            page.line("<text class=\"axis-title\" x=\"\(n(left))\" y=\"\(n(height - 6))\">0 at the left; every charge within the horizon, each once</text>")
            page.line("</svg>")
            let discounts = arms.compactMap { row in row.discountGiven[currency].map { "\(row.rule) \(Self.money($0))" } }
            if !discounts.isEmpty {
                page.line("<p class=\"caption muted\">discount given (regular price less offer price, already inside the amounts paid): \(esc(discounts.joined(separator: ", ")))</p>")
            }
            page.line("</figure>")
        }
    }

    // MARK: - Tables (the text view's numbers)

    private func tables(into page: inout HTMLPage) {
        let flows = Array(Set(rows.map(\.flow))).sorted()
        for flowName in flows {
            page.line("<section class=\"flow\">")
            page.line("<h2>Rates per rule: \(esc(flowName))</h2>")
            let header = ["Rule", "Arm", "Exposed", "Kept 24 h", "Took offer", "Renewed"]
            let body = rows.filter { $0.flow == flowName }.map { row in
                [row.rule + (row.splitControl ? " (control)" : "") + (shownPeriod(row).map { ", \($0)" } ?? ""), row.arm ?? "-", Self.count(row.exposed),
                 Self.describe(row.kept24h), row.tookOffer.map(Self.describe) ?? "-", Self.describe(row.renewed)]
            }
            table(header, body, numeric: [2], into: &page)
            let money = moneyTable(flow: flowName)
            if !money.isEmpty {
                page.line("<h3>Money per rule</h3>")
                table(moneyHeader, money, numeric: [4, 5], into: &page)
            }
            if let note = moneyPendingNote(flow: flowName) {
                page.line("<p class=\"muted\">\(esc(note))</p>")
            }
            for line in otherLayerLines(flow: flowName) {
                page.line("<p>\(esc(line))</p>")
            }
            page.line("</section>")
        }
        if let breakdown, let breakdownRows, !breakdownRows.isEmpty {
            page.line("<section class=\"breakdown\">")
            page.line("<h2>By \(breakdown.rawValue)</h2>")
            table(["Rule", breakdown.rawValue.capitalized, "Exposed", "Kept 24 h", "Renewed"], breakdownRows.map { row in
                ["\(row.flow)/\(row.rule)", row.valueName ?? row.value ?? "-", Self.count(row.exposed), Self.describe(row.kept24h), Self.describe(row.renewed)]
            }, numeric: [2], into: &page)
            let segmentLines = segmentSentences()
            if !segmentLines.isEmpty {
                page.line("<p>Within each \(esc(breakdown.rawValue)), each arm against its control (\(esc(segmentMethodPhrase))):</p>")
                page.line("<ul class=\"sentences\">")
                for line in segmentLines { page.line("<li>\(esc(line))</li>") }
                page.line("</ul>")
            }
            page.line("</section>")
        }
    }

    private func table(_ header: [String], _ body: [[String]], numeric: Set<Int>, into page: inout HTMLPage) {
        page.line("<table>")
        page.line("<thead><tr>" + header.map { "<th>\(esc($0))</th>" }.joined() + "</tr></thead>")
        page.line("<tbody>")
        for row in body {
            page.line("<tr>" + row.enumerated().map { index, cell in
                "<td data-label=\"\(esc(header[index]))\"\(numeric.contains(index) ? " class=\"number\"" : "")>\(esc(cell))</td>"
            }.joined() + "</tr>")
        }
        page.line("</tbody>")
        page.line("</table>")
    }

    // MARK: - Helpers

    /// A label short enough for a chart's margin; the full name is in the tables and the tooltips.
    static func short(_ text: String) -> String {
        text.count <= 24 ? text : String(text.prefix(23)) + "…"
    }

    /// Which of `count` day labels to print: about eight at most, always the first and the last.
    static func labelled(_ index: Int, of count: Int) -> Bool {
        let step = max(1, Int((Double(count) / 8).rounded(.up)))
        return index == count - 1 || (index % step == 0 && count - 1 - index >= step)
    }

    /// The look from which the interval has excluded zero at every look since: the day the arm became
    /// distinguishable (and stayed so); nil when the latest look does not tell the arms apart.
    static func becameDistinguishable(_ points: [ResultsTimeline.Point]) -> ResultsTimeline.Point? {
        func told(_ point: ResultsTimeline.Point) -> Bool { point.difference.verdict == .better || point.difference.verdict == .worse }
        guard let last = points.last, told(last) else { return nil }
        let start = (points.lastIndex { !told($0) } ?? -1) + 1
        return points[start]
    }

    /// An identifier for an SVG `id` from any text (FNV-1a, hex): unique enough within one page.
    static func identifier(_ text: String) -> String {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01B3
        }
        return String(hash, radix: 16)
    }
}

func esc(_ text: String) -> String { ResultsHTMLStyle.escape(text) }

/// A coordinate with two decimals (or `digits`), the same bytes on every machine.
func n(_ value: Double, _ digits: Int = 2) -> String {
    let text = String(format: "%.\(digits)f", value)
    // A negative value that rounds to zero prints as zero.
    return text.hasPrefix("-") && text.dropFirst().allSatisfy { $0 == "0" || $0 == "." } ? String(text.dropFirst()) : text
}

/// Lines of a page.
struct HTMLPage {
    private(set) var text = ""

    mutating func line(_ line: String) {
        text += line
        text += "\n"
    }
}

/// A linear axis with round ticks.
struct ChartAxis {
    struct Tick {
        var value: Double
        var label: String
    }

    var low: Double
    var high: Double
    var ticks: [Tick]

    /// Rates 0–1, shown as percents; the axis spans the intervals, widened to round tens (or fives).
    static func percent(low: Double, high: Double) -> ChartAxis {
        let span = max(0.0001, high - low)
        let step = span <= 0.12 ? 0.02 : span <= 0.3 ? 0.05 : span <= 0.6 ? 0.1 : 0.2
        var start = max(0, (low / step).rounded(.down) * step)
        var end = min(1, (high / step).rounded(.up) * step)
        if end - start < step { start = max(0, start - step); end = min(1, start + 2 * step) }
        return ChartAxis(low: start, high: end, ticks: stride(from: 0, through: Int(((end - start) / step).rounded()), by: 1).map { index in
            let value = start + Double(index) * step
            return Tick(value: value, label: String(format: "%.0f%%", value * 100))
        })
    }

    /// Differences of rates, labelled in percentage points with a sign; zero is always a tick.
    static func points(low: Double, high: Double) -> ChartAxis {
        let span = max(0.01, high - low)
        let step = [0.01, 0.02, 0.05, 0.1, 0.2, 0.25, 0.5].first { span / $0 <= 8 } ?? 1
        let start = (low / step).rounded(.down) * step, end = (high / step).rounded(.up) * step
        let count = Int(((end - start) / step).rounded())
        return ChartAxis(low: start, high: end, ticks: (0 ... count).map { index in
            let value = start + Double(index) * step
            let points = (value * 100).rounded()
            return Tick(value: value, label: points == 0 ? "0" : (points < 0 ? "−" : "+") + String(format: "%.0f", abs(points)))
        })
    }

    /// Counts from zero to a round number at or above `high`.
    static func counts(high: Int) -> ChartAxis {
        let peak = Double(max(1, high))
        let magnitude = pow(10, (log10(peak)).rounded(.down))
        let step = [1.0, 2, 5, 10].map { $0 * magnitude }.first { peak / $0 <= 5 } ?? magnitude * 10
        let end = max(step, (peak / step).rounded(.up) * step)
        let count = Int((end / step).rounded())
        return ChartAxis(low: 0, high: end, ticks: (0 ... count).map { index in
            let value = Double(index) * step
            return Tick(value: value, label: ResultsReport.count(Int(value.rounded())))
        })
    }
}

/// The page's one inline style sheet, its colours and its escaping.
enum ResultsHTMLStyle {
    /// Arm colours, in the group's order (the control first), distinguishable in print and by most
    /// colour-blind readers (Okabe & Ito).
    static let palette = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442"]

    /// Events' and manifests' text for the page: the project's one HTML escaping.
    static func escape(_ text: String) -> String { HTMLText.escape(text) }

    static let css = """
    :root{font-family:-apple-system,BlinkMacSystemFont,"Helvetica Neue",Arial,sans-serif;color:#1c1c1e;background:#f2f2f7}
    body{margin:0 auto;padding:16px;max-width:1100px}
    h1{font-size:24px;margin:8px 0}
    h2{font-size:19px;margin:28px 0 8px;overflow-wrap:anywhere}
    h3{font-size:16px;margin:16px 0 6px}
    p,li,dd,dt{overflow-wrap:anywhere}
    .meta,.muted{color:#6e6e73;font-size:14px}
    .warnings{background:#fff4e5;border:1px solid #e0a040;border-radius:8px;padding:4px 14px;margin:12px 0}
    .warnings h2{margin:8px 0 4px;font-size:16px}
    .warning{color:#9a3412;font-weight:600}
    .recommendation{font-weight:600;font-size:16px}
    .group{background:#fff;border-radius:10px;padding:4px 16px 12px;margin:16px 0;box-shadow:0 1px 3px rgba(0,0,0,.12)}
    .keys{list-style:none;padding:0;display:flex;flex-wrap:wrap;gap:4px 18px;font-size:14px}
    .swatch{display:inline-block;width:12px;height:12px;border-radius:6px;margin-inline-end:6px;vertical-align:-1px}
    .sentences{font-size:14px;line-height:1.45;padding-inline-start:20px}
    .charts{display:grid;grid-template-columns:repeat(auto-fit,minmax(min(100%,460px),1fr));gap:8px 24px}
    .chart{margin:8px 0;min-width:0}
    .chart figcaption{font-size:13px;color:#3c3c43;margin:0 0 4px}
    .chart svg{display:block;width:100%;height:auto;font-size:12px}
    .chart .caption{font-size:13px;margin:2px 0 0}
    svg .tick line{stroke:#d1d1d6;stroke-width:1}
    svg text{fill:#3c3c43}
    svg .interval{stroke-width:3;stroke-linecap:round}
    svg .band{opacity:.18}
    svg .diff-interval{stroke-width:1;opacity:.45}
    svg .trend,svg .exposed-line{fill:none;stroke-width:1.5}
    svg .survival{fill:none;stroke-width:2}
    svg .diff-bounds,svg .rate-bounds{stroke-width:2}
    svg .rate-interval{stroke-width:1;opacity:.45}
    svg .zero{stroke:#1c1c1e;stroke-width:1.2}
    svg .distinguishable{stroke:#1b7f3b;stroke-width:1.2;stroke-dasharray:4 3}
    svg .distinguishable-label{fill:#1b7f3b;font-weight:600}
    svg .paid-interval{stroke:#1b7f3b;stroke-width:3;stroke-linecap:round}
    svg circle.paid{fill:#1b7f3b}
    table{border-collapse:collapse;font-size:13px;background:#fff;width:100%}
    th,td{border-bottom:1px solid #d1d1d6;padding:5px 8px;text-align:start;vertical-align:top;overflow-wrap:anywhere}
    th{background:#e5e5ea}
    td.number{text-align:end}
    dl{display:grid;grid-template-columns:max-content 1fr;gap:4px 14px;font-size:14px}
    dt{font-weight:600}
    dd{margin:0}
    @media (max-width:640px){
    thead{display:none}
    table,tbody,tr,td{display:block;width:auto}
    tr{border-bottom:2px solid #c7c7cc;padding:4px 0}
    td{border:0;padding:2px 8px}
    td.number{text-align:start}
    td::before{content:attr(data-label) ": ";font-weight:600}
    dl{grid-template-columns:1fr}
    }

    """
}
