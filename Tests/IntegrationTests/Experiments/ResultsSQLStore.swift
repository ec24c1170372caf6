import Basics
import Foundation
@testable import ExperimentsTestSupport
import Testing
import TestSupport
import EventContract
@testable import Experiments

/// The simulated event store that every engine's run of docs/results-sql.md reads, the windows it is
/// read over, and the rows `results --format json` gives for each — what the SQL must equal.
struct ResultsSQLStore {
    struct Unavailable: Error, CustomStringConvertible {
        var description: String
    }

    /// A window of the report: `since` and `now`, in milliseconds.
    struct Window: Sendable, CustomStringConvertible {
        var name: String
        var since: Int64
        var now: Int64

        var description: String { name }
    }

    /// One report row as the documented queries select it: the counts in their column order
    /// (`exposed`, `kept`, `not_kept`, `kept_pending`, `offered`, `took_offer`, `not_took_offer`,
    /// `took_offer_pending`, `renewed`, `not_renewed`, `renewed_pending`, `paid_decided`,
    /// `paid_pending`), then `paid` (currency → milliunits).
    struct Row: Equatable, Sendable, CustomStringConvertible {
        var flow: String
        var rule: String
        var counts: [Int]
        var paid: [String: Int64]

        var description: String {
            "\(flow)/\(rule) \(counts.map(String.init).joined(separator: " ")) \(paid.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" })"
        }
    }

    let simulator: EventSimulator

    /// Four arms of one split group — a message (the control), a promotional offer, an alternate
    /// product and a holdout — whose customers pay in two currencies and take offers by every path,
    /// including redemptions after the renewal that must not count.
    init() {
        var simulator = EventSimulator(arms: [Simulation.control, Simulation.treatment,
                                              EventSimulator.Arm(rule: "switch-yearly", keepRate: 0.35, answer: "alternateProduct",
                                                                 alternateProduct: "com.example.stillpoint.yearly"),
                                              EventSimulator.Arm(rule: "holdout", keepRate: 0.25, answer: "none")],
                                       customers: 1200)
        simulator.days = 20
        simulator.currencies = ["EUR", "USD"]
        simulator.takingPaths = true
        // Every charge notified twice: paid must count each once.
        simulator.paymentEchoes = true
        simulator.run(seed: 77)
        self.simulator = simulator
    }

    /// Mid-experiment, so every state appears (kept, offer and renewal pending; decided; not renewed by
    /// the deadline); and a later window, starting after some first exposures, once nearly all is decided.
    var windows: [Window] {
        [Window(name: "mid-experiment", since: simulator.start + 2 * EventTime.day, now: simulator.start + 18 * EventTime.day + 7 * EventTime.hour),
         Window(name: "two months on", since: simulator.start + 5 * EventTime.day, now: simulator.start + 60 * EventTime.day)]
    }

    /// Writes the store under a new temporary folder.
    func write() throws -> URL {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("experiments-sql-\(UUID().uuidString)")
        try simulator.write(to: root)
        return root
    }

    func report(_ root: URL, _ window: Window) throws -> ResultsReport {
        try ResultsReport.compute(source: FolderEventSource(root: root), environment: "production",
                                  since: UTCTime(milliseconds: window.since),
                                  now: UTCTime(milliseconds: window.now))
    }

    /// The report's rows as the queries select them: a rule that offered nothing has no `tookOffer`
    /// and counts zero offered.
    static func rows(_ report: ResultsReport) -> [Row] {
        report.rows.map { row in
            let took = row.tookOffer
            return Row(flow: row.flow, rule: row.rule,
                       counts: [row.exposed, row.kept24h.successes, row.kept24h.failures, row.kept24h.pending,
                                took.map { $0.successes + $0.failures + $0.pending } ?? 0, took?.successes ?? 0, took?.failures ?? 0, took?.pending ?? 0,
                                row.renewed.successes, row.renewed.failures, row.renewed.pending, row.paid.decided, row.paid.pending],
                       paid: row.paid.currencies.mapValues(\.milliunits))
        }
    }

    /// Rows printed by a runner as JSON: `[[flow, rule, count…, {currency: milliunits} or null], …]`.
    static func rows(json: Data) throws -> [Row] {
        let rows = try #require(try JSONSerialization.jsonObject(with: json) as? [[Any]], "not a list of rows: \(String(decoding: json, as: UTF8.self).prefix(500))")
        return try rows.map { row in
            try #require(row.count == 16, "a row of \(row.count) columns, not 16: \(row)")
            let paid = try #require(row[15] is NSNull ? [:] : row[15] as? [String: Any], "paid is not a map: \(row[15])")
            return Row(flow: try #require(row[0] as? String), rule: try #require(row[1] as? String),
                       counts: try row[2 ..< 15].map { try #require(($0 as? NSNumber)?.intValue, "not a count: \($0)") },
                       paid: try paid.mapValues { try #require(($0 as? NSNumber)?.int64Value, "not milliunits: \($0)") })
        }
    }

    /// The rows of each side that the other lacks, for a failure message a person can read.
    static func differences(_ sql: [Row], _ report: [Row]) -> String {
        let missing = report.filter { !sql.contains($0) }.map { "results: \($0)" }
        let extra = sql.filter { !report.contains($0) }.map { "SQL:     \($0)" }
        return (missing + extra).joined(separator: "\n")
    }

    /// A block of docs/results-sql.md, exactly as printed: the fenced block after its marker comment.
    static func documented(_ name: String, language: String = "sql", in page: String = "docs/results-sql.md") throws -> String {
        let text = try Repository.text(page)
        guard let marker = text.range(of: "<!-- \(name) -->"),
              let open = text.range(of: "```\(language)\n", range: marker.upperBound ..< text.endIndex),
              let close = text.range(of: "\n```", range: open.upperBound ..< text.endIndex) else {
            throw Unavailable(description: "\(page) has no ```\(language) block after <!-- \(name) -->")
        }
        return String(text[open.upperBound ..< close.lowerBound])
    }

    /// The page's placeholders, replaced as its text says.
    static func fill(_ text: String, root: URL, _ window: Window) -> String {
        func sqlTime(_ millis: Int64) -> String {
            String(EventTime.format(millis).dropLast().replacingOccurrences(of: "T", with: " "))
        }
        return text.replacingOccurrences(of: "{root}", with: root.path)
            .replacingOccurrences(of: "{environment}", with: "production")
            .replacingOccurrences(of: "{since}", with: sqlTime(window.since))
            .replacingOccurrences(of: "{now}", with: sqlTime(window.now))
            .replacingOccurrences(of: "{since_iso}", with: EventTime.format(window.since))
            .replacingOccurrences(of: "{now_iso}", with: EventTime.format(window.now))
            .replacingOccurrences(of: "{paid_horizon_days}", with: "35")
            .replacingOccurrences(of: "{paid_close_days}", with: "42")
    }

    /// Runs a program to its end and returns what it printed; throws with the end of its error output
    /// otherwise (kept in a file, so a chatty engine cannot fill a pipe and stall).
    static func run(_ executable: URL, _ arguments: [String], environment: [String: String]? = nil) throws -> Data {
        let errorFile = FileManager.default.temporaryDirectory.appendingPathComponent("experiments-sql-stderr-\(UUID().uuidString)")
        try Data().write(to: errorFile)
        defer { try? FileManager.default.removeItem(at: errorFile) }
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        if let environment { process.environment = environment }
        let output = Pipe()
        process.standardOutput = output
        process.standardError = try FileHandle(forWritingTo: errorFile)
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            let errorText = (try? String(contentsOf: errorFile, encoding: .utf8)) ?? ""
            throw Unavailable(description: "\(executable.path) exited with \(process.terminationStatus): \(errorText.suffix(3000))")
        }
        return data
    }

    /// The coverage the comparison needs to mean something: every state of every count appears.
    static func checkCoverage(_ report: ResultsReport, _ window: Window) {
        let offered = report.rows.compactMap(\.tookOffer)
        #expect(offered.count == 2, "\(window): the offer and the alternate product")
        #expect(offered.allSatisfy { $0.successes > 0 && $0.failures > 0 }, "\(window)")
        #expect(report.rows.allSatisfy { $0.renewed.successes > 0 && $0.renewed.failures > 0 }, "\(window)")
        if window.name == "mid-experiment" {
            #expect(report.rows.allSatisfy { $0.kept24h.pending > 0 && $0.renewed.pending > 0 && $0.paid.pending > 0 }, "\(window)")
        } else {
            // Decided money in both currencies, and some customers still inside their horizon.
            #expect(report.rows.allSatisfy { $0.paid.decided > 0 && $0.paid.pending > 0 && $0.paid.currencies.count == 2 }, "\(window)")
        }
        if window.name == "mid-experiment" {
            #expect(offered.allSatisfy { $0.pending > 0 }, "\(window)")
        }
        #expect(report.events.duplicates > 0)
    }
}
