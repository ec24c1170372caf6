import Foundation
import Testing
import TestSupport
import EventContract
@testable import Experiments

/// The SQL in docs/results-sql.md, run by DuckDB (installed by `.ci/setup --test` into `.build/tools`)
/// over the same simulated events as `results`, must give the same numbers.
@Suite struct DuckDBTests {
    struct Unavailable: Error, CustomStringConvertible {
        var description: String
    }

    /// A query of the document: the SQL block after its marker comment.
    static func documentedQuery(_ name: String) throws -> String {
        let text = try Repository.text("docs/results-sql.md")
        guard let marker = text.range(of: "<!-- \(name) -->"),
              let open = text.range(of: "```sql\n", range: marker.upperBound ..< text.endIndex),
              let close = text.range(of: "\n```", range: open.upperBound ..< text.endIndex) else {
            throw Unavailable(description: "docs/results-sql.md has no ```sql block after <!-- \(name) -->")
        }
        return String(text[open.upperBound ..< close.lowerBound])
    }

    @Test func theDocumentedDuckDBQueryGivesExactlyTheNumbersOfTheJSONReport() async throws {
        let python = Repository.url(".build/tools/bin/python")
        guard FileManager.default.isExecutableFile(atPath: python.path) else {
            throw Unavailable(description: "\(python.path) is missing: run `bash .ci/setup --test` (it installs duckdb into .build/tools)")
        }
        var simulator = EventSimulator(arms: [SimulationTests.control, SimulationTests.treatment,
                                              EventSimulator.Arm(rule: "holdout", keepRate: 0.25, answer: "none")],
                                       customers: 900)
        simulator.days = 20
        simulator.run(seed: 77)
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("experiments-duckdb-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        try simulator.write(to: root)

        // Mid-experiment, so every state appears: kept and renewal pending, decided, and not renewed by deadline.
        let nowMillis = simulator.start + 18 * EventTime.day + 7 * EventTime.hour
        let sinceMillis = simulator.start + 2 * EventTime.day
        let report = try ResultsReport.compute(source: FolderEventSource(root: root), environment: "production",
                                               since: Date(timeIntervalSince1970: Double(sinceMillis) / 1000),
                                               now: Date(timeIntervalSince1970: Double(nowMillis) / 1000))
        func sqlTime(_ millis: Int64) -> String {
            String(EventTime.format(millis).dropLast().replacingOccurrences(of: "T", with: " "))
        }
        func fill(_ query: String) -> String {
            query.replacingOccurrences(of: "{root}", with: root.path)
                .replacingOccurrences(of: "{environment}", with: "production")
                .replacingOccurrences(of: "{since}", with: sqlTime(sinceMillis))
                .replacingOccurrences(of: "{now}", with: sqlTime(nowMillis))
                .replacingOccurrences(of: "{since_iso}", with: EventTime.format(sinceMillis))
                .replacingOccurrences(of: "{now_iso}", with: EventTime.format(nowMillis))
        }
        let duckdbFile = root.appendingPathComponent("duckdb.sql")
        try Data(fill(try Self.documentedQuery("duckdb-results-sql")).utf8).write(to: duckdbFile)
        // Trino's query runs in DuckDB once its one Trino function and the two Athena tables have stand-ins.
        let trinoFile = root.appendingPathComponent("trino.sql")
        try Data(fill(Self.trinoStandIns + (try Self.documentedQuery("trino-results-sql"))).utf8).write(to: trinoFile)
        let outputs = try await onOwnThread {
            [try Self.run(python, ["-c", Self.runner, duckdbFile.path]), try Self.run(python, ["-c", Self.runner, trinoFile.path])]
        }

        let fromReport = report.rows.map { row in
            [row.flow, row.rule, "\(row.exposed)", "\(row.kept24h.successes)", "\(row.kept24h.failures)", "\(row.kept24h.pending)",
             "\(row.renewed.successes)", "\(row.renewed.failures)", "\(row.renewed.pending)"].joined(separator: " ")
        }
        for output in outputs {
            let rows = try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [[Any]])
            let fromSQL = rows.map { row in row.map { "\($0)" }.joined(separator: " ") }
            #expect(fromSQL == fromReport)
        }
        #expect(report.rows.allSatisfy { $0.kept24h.pending > 0 && $0.renewed.pending > 0 && $0.renewed.failures > 0 })
        #expect(report.events.duplicates > 0)
    }

    static let trinoStandIns = """
        CREATE MACRO from_iso8601_timestamp(text) AS strptime(text, '%Y-%m-%dT%H:%M:%S.%gZ');
        CREATE VIEW retention_decisions AS SELECT * FROM read_json_auto('{root}/events/v1/decisions/*/*/*/*.ndjson',
            format = 'newline_delimited', hive_partitioning = 1,
            columns = {eventId: 'VARCHAR', customer: 'VARCHAR', keyId: 'VARCHAR', flow: 'VARCHAR', rule: 'VARCHAR', answer: 'VARCHAR', time: 'VARCHAR'});
        CREATE VIEW retention_outcomes AS SELECT * FROM read_json_auto('{root}/events/v1/outcomes/*/*/*/*.ndjson',
            format = 'newline_delimited', hive_partitioning = 1,
            columns = {eventId: 'VARCHAR', customer: 'VARCHAR', keyId: 'VARCHAR', notificationType: 'VARCHAR', subtype: 'VARCHAR',
                       time: 'VARCHAR', effectiveDate: 'VARCHAR', expiresDate: 'VARCHAR'});

        """

    /// Runs every statement of the file and prints the last one's rows as JSON.
    static let runner = """
        import json, sys
        try:
            import duckdb
        except ImportError as error:
            sys.exit(f"duckdb is not importable ({error}): run `bash .ci/setup --test`")
        *setup, query = [part for part in open(sys.argv[1]).read().split(";\\n") if part.strip()]
        # A query slower than two seconds (a loaded machine) would otherwise draw a progress bar on stdout.
        connection = duckdb.connect()
        connection.execute("SET enable_progress_bar = false")
        for statement in setup:
            connection.execute(statement)
        rows = connection.sql(query).fetchall()
        print(json.dumps([[int(value) if hasattr(value, "as_integer_ratio") and not isinstance(value, float) else value for value in row] for row in rows]))
        """

    static func run(_ executable: URL, _ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        // Read before waiting, so a large answer cannot fill the pipe and stall the child.
        let data = output.fileHandleForReading.readDataToEndOfFile()
        let errorText = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw Unavailable(description: "\(executable.path) exited with \(process.terminationStatus): \(errorText.suffix(2000))")
        }
        return String(decoding: data, as: UTF8.self)
    }
}
