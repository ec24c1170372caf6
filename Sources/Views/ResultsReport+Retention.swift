import Experiments
import Foundation

extension ResultsReport {
    /// The days the text and Markdown views show of each retention curve, those within its observed range.
    static let retentionDays = [1, 7, 14, 30, 60, 90]

    /// `96.1% (95.0–97.0) n=812`: the share still subscribed, its 95% interval, the customers at risk.
    static func describe(_ point: KaplanMeier.Point) -> String {
        let interval = point.interval.map { " (\(String(format: "%.1f", $0.low * 100))–\(String(format: "%.1f", $0.high * 100)))" } ?? ""
        return "\(percent(point.subscribed))\(interval) n=\(count(point.atRisk))"
    }

    /// The retention table of a flow's rows (each arm with its period, as the rates table names it):
    /// a column per day of `retentionDays` within the longest curve; empty when no row has a curve
    /// past day 0.
    func retentionTable(flow flowName: String) -> (header: [String], rows: [[String]]) {
        let flowRows = rows.filter { $0.flow == flowName && ($0.retention?.count ?? 0) > 1 }
        let longest = flowRows.map { ($0.retention?.count ?? 1) - 1 }.max() ?? 0
        let days = Self.retentionDays.filter { $0 <= longest }
        guard !days.isEmpty else { return ([], []) }
        let table = flowRows.map { row in
            [row.rule + (row.splitControl ? " (control)" : "") + (shownPeriod(row).map { ", \($0)" } ?? "")]
                + days.map { day in row.retention.flatMap { $0.first { $0.day == day } }.map(Self.describe) ?? "-" }
        }
        return (["Rule"] + days.map { "Day \($0)" }, table)
    }

    /// The terminal view's retention block of a flow: a blank line, a title and the aligned table.
    func retentionLines(flow flowName: String) -> [String] {
        let table = retentionTable(flow: flowName)
        guard !table.rows.isEmpty else { return [] }
        return ["", "  Still subscribed by day since exposure (Kaplan–Meier, 95% interval, n at risk):"]
            + Self.align([table.header.map { $0.uppercased() }] + table.rows).map { "    " + $0 }
    }

    /// The pull-request comment's folded retention table over every flow.
    func markdownRetention(into lines: inout [String]) {
        let tables = orderedFlows.map { ($0, retentionTable(flow: $0)) }.filter { !$0.1.rows.isEmpty }
        guard !tables.isEmpty else { return }
        lines.append("")
        lines.append("<details><summary>Still subscribed by day since exposure</summary>")
        for (flowName, table) in tables {
            lines.append("")
            lines.append("\(Self.cell(flowName)): share still subscribed (Kaplan–Meier), its 95% interval, n at risk.")
            lines.append("")
            lines.append("| " + table.header.map(Self.cell).joined(separator: " | ") + " |")
            lines.append("|---|" + String(repeating: "---|", count: table.header.count - 1))
            for row in table.rows {
                lines.append("| " + row.map(Self.cell).joined(separator: " | ") + " |")
            }
        }
        lines.append("")
        lines.append("</details>")
    }
}
