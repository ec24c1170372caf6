import Experiments
import EventContract
import Foundation

extension ResultsReport {
    static func metricName(_ metric: ResultsTimeline.Metric) -> String {
        switch metric {
        case .kept24h: "kept at 24 h"
        case .renewed: "renewed"
        case .tookOffer: "took offer"
        }
    }

    /// Took offer over time, one line per arm whose answer had something to take: at the end of every
    /// day the rate and its 95% interval as a report then would show them — while the rate is early, a
    /// dashed bar over its bounds and no dot. The last look is the report's own row.
    func tookOfferChart(_ series: [String: [ResultsTimeline.RatePoint]], arms: [Row], colours: [String: String], into page: inout HTMLPage) {
        let ordered = arms.compactMap { row in series[row.rule].map { (row.rule, $0) } }.filter { !$0.1.isEmpty }
        guard !ordered.isEmpty else { return }
        let looks = ordered.flatMap { $0.1 }
        let width = 560.0, left = 56.0, right = 540.0, top = 14.0, bottom = 210.0, height = 252.0
        let ends = looks.compactMap { look in look.rate.early ? look.rate.bounds : look.rate.interval }
        let axis = ChartAxis.percent(low: ends.map(\.low).min() ?? 0, high: ends.map(\.high).max() ?? 1)
        let first = looks.map(\.time).min() ?? 0, last = looks.map(\.time).max() ?? 0
        let x = { (time: Int64) in last == first ? (left + right) / 2 : left + Double(time - first) / Double(last - first) * (right - left) }
        let y = { (value: Double) in bottom - (value - axis.low) / (axis.high - axis.low) * (bottom - top) }
        page.line("<figure class=\"chart\">")
        page.line("<figcaption>Took offer, each arm with something to take, day by day: the rate and its 95% interval (dashed, without a dot: where the rate will end, while most are still pending)</figcaption>")
        page.line("<svg class=\"took-offer\" viewBox=\"0 0 \(n(width)) \(n(height))\" role=\"img\" aria-label=\"Took offer per arm over time\">")
        for tick in axis.ticks {
            page.line("<g class=\"tick\" data-value=\"\(n(tick.value, 6))\"><line x1=\"\(n(left))\" y1=\"\(n(y(tick.value)))\" x2=\"\(n(right))\" y2=\"\(n(y(tick.value)))\"/><text x=\"\(n(left - 6))\" y=\"\(n(y(tick.value) + 4))\" text-anchor=\"end\">\(tick.label)</text></g>")
        }
        let days = ordered[0].1
        for (index, point) in days.enumerated() where Self.labelled(index, of: days.count) {
            page.line("<text class=\"day\" x=\"\(n(x(point.time)))\" y=\"\(n(bottom + 16))\" text-anchor=\"middle\">\(String(point.day.suffix(5)))</text>")
        }
        for (rule, points) in ordered {
            let colour = colours[rule] ?? "#000"
            let settled = points.filter { !$0.rate.early && $0.rate.rate != nil }
            if settled.count > 1 {
                page.line("<polyline class=\"trend\" data-rule=\"\(esc(rule))\" points=\"\(settled.map { "\(n(x($0.time))),\(n(y($0.rate.rate ?? 0)))" }.joined(separator: " "))\" stroke=\"\(colour)\"/>")
            }
            for point in points {
                let title = "<title>\(esc(rule)), \(point.day): \(esc(Self.describe(point.rate)))</title>"
                if point.rate.early, let bounds = point.rate.bounds {
                    page.line("<line class=\"rate-bounds\" data-rule=\"\(esc(rule))\" data-day=\"\(point.day)\" x1=\"\(n(x(point.time)))\" y1=\"\(n(y(bounds.low)))\" x2=\"\(n(x(point.time)))\" y2=\"\(n(y(bounds.high)))\" stroke=\"\(colour)\" stroke-dasharray=\"4 3\">\(title)</line>")
                } else if let rate = point.rate.rate, let interval = point.rate.interval {
                    page.line("<line class=\"rate-interval\" data-rule=\"\(esc(rule))\" data-day=\"\(point.day)\" x1=\"\(n(x(point.time)))\" y1=\"\(n(y(interval.low)))\" x2=\"\(n(x(point.time)))\" y2=\"\(n(y(interval.high)))\" stroke=\"\(colour)\"/>")
                    page.line("<circle class=\"rate-look\" data-rule=\"\(esc(rule))\" data-day=\"\(point.day)\" data-time=\"\(EventTime.format(point.time))\" cx=\"\(n(x(point.time)))\" cy=\"\(n(y(rate)))\" r=\"3\" fill=\"\(colour)\">\(title)</circle>")
                }
            }
        }
        page.line("<text class=\"axis-title\" x=\"\(n(left))\" y=\"\(n(height - 4))\">took offer, each arm that offers something</text>")
        page.line("</svg>")
        page.line("</figure>")
    }

    /// The period's retention curves: per arm, the share of its exposed customers still subscribed by
    /// day since exposure, as a step line over its pointwise 95% band, a dot at each day of the table
    /// below it (the same numbers, for reading without the chart).
    func retentionChart(_ arms: [Row], comparison: SplitComparison, colours: [String: String], into page: inout HTMLPage) {
        let curves = arms.compactMap { row in row.retention.flatMap { $0.count > 1 ? (row.rule, $0) : nil } }
        guard let longest = curves.map({ $0.1.count - 1 }).max() else { return }
        let width = 560.0, left = 56.0, right = 540.0, top = 14.0, bottom = 210.0, height = 252.0
        let lowest = curves.flatMap { $0.1.map { $0.interval?.low ?? $0.subscribed } }.min() ?? 0
        let axis = ChartAxis.percent(low: lowest, high: 1)
        let x = { (day: Int) in left + Double(day) / Double(longest) * (right - left) }
        let y = { (value: Double) in bottom - (value - axis.low) / (axis.high - axis.low) * (bottom - top) }
        let marked = Self.retentionDays.filter { $0 <= longest }
        page.line("<figure class=\"chart\">")
        page.line("<figcaption>Still subscribed by day since the answer, each arm (Kaplan–Meier, shaded: pointwise 95% interval)</figcaption>")
        page.line("<svg class=\"retention\" viewBox=\"0 0 \(n(width)) \(n(height))\" role=\"img\" aria-label=\"Share still subscribed by day since exposure, per arm\">")
        for tick in axis.ticks {
            page.line("<g class=\"tick\" data-value=\"\(n(tick.value, 6))\"><line x1=\"\(n(left))\" y1=\"\(n(y(tick.value)))\" x2=\"\(n(right))\" y2=\"\(n(y(tick.value)))\"/><text x=\"\(n(left - 6))\" y=\"\(n(y(tick.value) + 4))\" text-anchor=\"end\">\(tick.label)</text></g>")
        }
        for day in [0] + marked {
            page.line("<text class=\"day\" x=\"\(n(x(day)))\" y=\"\(n(bottom + 16))\" text-anchor=\"middle\">\(day)</text>")
        }
        for (rule, curve) in curves {
            let colour = colours[rule] ?? "#000"
            let banded = curve.filter { $0.interval != nil }
            if !banded.isEmpty {
                // The band steps as the line does: each day's share and interval hold until the next day.
                let upper = banded.flatMap { [(x($0.day), $0.interval?.high ?? 0), (x(min($0.day + 1, longest)), $0.interval?.high ?? 0)] }
                let lower = banded.reversed().flatMap { [(x(min($0.day + 1, longest)), $0.interval?.low ?? 0), (x($0.day), $0.interval?.low ?? 0)] }
                page.line("<polygon class=\"band\" data-rule=\"\(esc(rule))\" points=\"\((upper + lower).map { "\(n($0.0)),\(n(y($0.1)))" }.joined(separator: " "))\" fill=\"\(colour)\"/>")
            }
            var path = "M\(n(x(0))),\(n(y(curve[0].subscribed)))"
            for point in curve.dropFirst() {
                path += " H\(n(x(point.day))) V\(n(y(point.subscribed)))"
            }
            let lastPoint = curve[curve.count - 1]
            page.line("<path class=\"survival\" data-rule=\"\(esc(rule))\" d=\"\(path)\" stroke=\"\(colour)\"><title>\(esc(rule)): \(esc(Self.percent(lastPoint.subscribed))) still subscribed at day \(lastPoint.day)</title></path>")
            for day in marked {
                guard let point = curve.first(where: { $0.day == day }) else { continue }
                page.line("<circle class=\"survival-point\" data-rule=\"\(esc(rule))\" data-day=\"\(day)\" data-share=\"\(n(point.subscribed, 6))\" cx=\"\(n(x(day)))\" cy=\"\(n(y(point.subscribed)))\" r=\"3\" fill=\"\(colour)\"><title>\(esc(rule)), day \(day): \(esc(Self.describe(point)))</title></circle>")
            }
        }
        page.line("<text class=\"axis-title\" x=\"\(n(left))\" y=\"\(n(height - 4))\">days since the answer</text>")
        page.line("</svg>")
        retentionFallback(curves, days: marked, into: &page)
        page.line("</figure>")
    }

    /// The curves' numbers at the marked days, as a table.
    private func retentionFallback(_ curves: [(String, [KaplanMeier.Point])], days: [Int], into page: inout HTMLPage) {
        guard !days.isEmpty else { return }
        page.line("<table class=\"retention-table\">")
        page.line("<thead><tr><th>Rule</th>" + days.map { "<th>Day \($0)</th>" }.joined() + "</tr></thead>")
        page.line("<tbody>")
        for (rule, curve) in curves {
            let cells = days.map { day in curve.first { $0.day == day }.map(Self.describe) ?? "-" }
            page.line("<tr><td data-label=\"Rule\">\(esc(rule))</td>" + zip(days, cells).map { "<td data-label=\"Day \($0)\">\(esc($1))</td>" }.joined() + "</tr>")
        }
        page.line("</tbody>")
        page.line("</table>")
    }
}
