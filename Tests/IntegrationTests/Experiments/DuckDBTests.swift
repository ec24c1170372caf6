import Foundation
import Testing
import TestSupport
import EventContract
@testable import Experiments

/// The SQL in docs/results-sql.md, run by DuckDB (installed by `.ci/setup --test` into `.build/tools`)
/// over the same simulated events as `results`, must give the same numbers.
@Suite struct DuckDBTests {
    static func documentedQuery(_ name: String) throws -> String {
        try ResultsSQLStore.documented(name)
    }

    @Test func aDataTeamRunningTheDocumentedDuckDBAndTrinoQueriesGetsExactlyTheNumbersOfTheJSONReport() async throws {
        let python = Repository.url(".build/tools/bin/python")
        guard FileManager.default.isExecutableFile(atPath: python.path) else {
            throw ResultsSQLStore.Unavailable(description: "\(python.path) is missing: run `bash .ci/setup --test` (it installs duckdb into .build/tools)")
        }
        let store = ResultsSQLStore()
        let root = try store.write()
        defer { try? FileManager.default.removeItem(at: root) }
        for window in store.windows {
            let report = try store.report(root, window)
            ResultsSQLStore.checkCoverage(report, window)
            let duckdbFile = root.appendingPathComponent("duckdb.sql")
            try Data(ResultsSQLStore.fill(try Self.documentedQuery("duckdb-results-sql"), root: root, window).utf8).write(to: duckdbFile)
            // Trino's query runs in DuckDB once its Trino functions and the two Athena tables have stand-ins.
            let trinoFile = root.appendingPathComponent("trino.sql")
            try Data(ResultsSQLStore.fill(Self.trinoStandIns + (try Self.documentedQuery("trino-results-sql")), root: root, window).utf8).write(to: trinoFile)
            let outputs = try await onOwnThread {
                [try ResultsSQLStore.run(python, ["-c", Self.runner, duckdbFile.path]), try ResultsSQLStore.run(python, ["-c", Self.runner, trinoFile.path])]
            }
            let fromReport = ResultsSQLStore.rows(report)
            for (engine, output) in zip(["DuckDB", "Trino (in DuckDB)"], outputs) {
                let fromSQL = try ResultsSQLStore.rows(json: output)
                #expect(fromSQL == fromReport, "\(engine), \(window):\n\(ResultsSQLStore.differences(fromSQL, fromReport))")
            }
        }
    }

    static let trinoStandIns = """
        CREATE MACRO from_iso8601_timestamp(text) AS strptime(text, '%Y-%m-%dT%H:%M:%S.%gZ');
        CREATE MACRO map_agg(key, value) AS map_from_entries(list({'k': key, 'v': value}));
        CREATE VIEW retention_decisions AS SELECT * FROM read_json_auto('{root}/events/v1/decisions/*/*/*/*.ndjson',
            format = 'newline_delimited', hive_partitioning = 1,
            columns = {eventId: 'VARCHAR', customer: 'VARCHAR', keyId: 'VARCHAR', flow: 'VARCHAR', rule: 'VARCHAR', answer: 'VARCHAR',
                       offerIdentifier: 'VARCHAR', alternateProductId: 'VARCHAR', time: 'VARCHAR'});
        CREATE VIEW retention_outcomes AS SELECT * FROM read_json_auto('{root}/events/v1/outcomes/*/*/*/*.ndjson',
            format = 'newline_delimited', hive_partitioning = 1,
            columns = {eventId: 'VARCHAR', customer: 'VARCHAR', keyId: 'VARCHAR', notificationType: 'VARCHAR', subtype: 'VARCHAR',
                       offerIdentifier: 'VARCHAR', productId: 'VARCHAR', autoRenewProductId: 'VARCHAR', price: 'BIGINT', currency: 'VARCHAR',
                       time: 'VARCHAR', effectiveDate: 'VARCHAR', expiresDate: 'VARCHAR', purchaseDate: 'VARCHAR'});

        """

    /// Runs every statement of the file and prints the last one's rows as JSON (maps as objects).
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
}
