import EventContract
import Experiments
import Foundation

/// `results --vs-duckdb` and `--vs-spark`: the manual's SQL (docs/results-sql.md of this checkout, exactly
/// as printed, placeholders filled) over the same generated files, each engine in a child Python process
/// (`--python`, by default the `.build/tools` one `.ci/setup --test` makes): its time, its peak memory,
/// and whether its counts are the report's. Each engine gets the same memory budget (`--sql-memory`,
/// default 4 GB: DuckDB's `memory_limit`, Spark's driver memory) and spills beside the generated files.
struct SQLEngineComparison {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    let root: URL
    let now: Int64
    let report: ResultsReport
    let python: URL
    /// Gigabytes each engine may use.
    let memoryGB: Int

    struct Unavailable: Error, CustomStringConvertible {
        var description: String
    }

    /// A row as the queries select it: flow, rule, the thirteen counts, then what was paid per currency.
    struct Row: Equatable {
        var flow: String
        var rule: String
        var counts: [Int]
        var paid: [String: Int64]
    }

    var expected: [Row] {
        report.rows.map { row in
            let took = row.tookOffer
            return Row(flow: row.flow, rule: row.rule,
                       counts: [row.exposed, row.kept24h.successes, row.kept24h.failures, row.kept24h.pending,
                                took.map { $0.successes + $0.failures + $0.pending } ?? 0, took?.successes ?? 0, took?.failures ?? 0, took?.pending ?? 0,
                                row.renewed.successes, row.renewed.failures, row.renewed.pending, row.paid.decided, row.paid.pending],
                       paid: row.paid.currencies.mapValues(\.milliunits))
        }
    }

    static func documented(_ name: String, language: String = "sql") throws -> String {
        let page = repository.appendingPathComponent("docs/results-sql.md")
        let text = try String(contentsOf: page, encoding: .utf8)
        guard let marker = text.range(of: "<!-- \(name) -->"),
              let open = text.range(of: "```\(language)\n", range: marker.upperBound ..< text.endIndex),
              let close = text.range(of: "\n```", range: open.upperBound ..< text.endIndex) else {
            throw Unavailable(description: "\(page.path) has no ```\(language) block after <!-- \(name) -->")
        }
        return String(text[open.upperBound ..< close.lowerBound])
    }

    /// The page's placeholders: the window opens before the first generated event (as `results` without
    /// `--since` reads everything) and closes at the report's `now`.
    func fill(_ text: String) -> String {
        let since = ResultsEventGenerator.start - 100 * ResultsEventGenerator.day
        return text.replacingOccurrences(of: "{root}", with: root.path)
            .replacingOccurrences(of: "{environment}", with: "production")
            .replacingOccurrences(of: "{since}", with: String(EventTime.format(since).dropLast().replacingOccurrences(of: "T", with: " ")))
            .replacingOccurrences(of: "{now}", with: String(EventTime.format(now).dropLast().replacingOccurrences(of: "T", with: " ")))
            .replacingOccurrences(of: "{since_iso}", with: EventTime.format(since))
            .replacingOccurrences(of: "{now_iso}", with: EventTime.format(now))
            .replacingOccurrences(of: "{paid_horizon_days}", with: String(ResultsReport.defaultPaidHorizonDays))
            .replacingOccurrences(of: "{paid_close_days}", with: String(ResultsReport.defaultPaidHorizonDays + 7))
    }

    /// Whether `module` imports in the chosen Python.
    func has(_ module: String) -> Bool {
        (try? run(["-c", "import \(module)"])) != nil
    }

    func duckDB() throws -> String {
        let output = try run(["-c", Self.duckDBRunner, fill(try Self.documented("duckdb-results-sql")), "\(memoryGB)GB",
                              root.appendingPathComponent("duckdb-spill").path])
        let answer = try decode(output)
        return "DuckDB \(answer.string("version")) (memory limit \(memoryGB) GB; the manual's DuckDB query): \(Self.seconds(answer.number("seconds"))), "
            + "peak RSS \(Self.megabytes(answer.number("peakKilobytes"))) (its process); \(try agreement(answer))"
    }

    func spark() throws -> String {
        let output = try run(["-c", Self.sparkRunner, fill(try Self.documented("spark-results-tables", language: "python")),
                              fill(try Self.documented("spark-results-sql")), "\(memoryGB)g", root.appendingPathComponent("spark-scratch").path])
        let answer = try decode(output)
        let start = answer.number("startSeconds"), query = answer.number("querySeconds")
        return "Spark \(answer.string("version")) local[*] (driver memory \(memoryGB) GB; the manual's Spark tables and query): "
            + "\(Self.seconds(start + query)) (session start \(Self.seconds(start)), query \(Self.seconds(query))), "
            + "peak RSS \(Self.megabytes(answer.number("jvmPeakKilobytes"))) (JVM) + \(Self.megabytes(answer.number("peakKilobytes"))) (Python driver); "
            + (try agreement(answer))
    }

    private func agreement(_ answer: [String: Any]) throws -> String {
        guard let rows = answer["rows"] as? [[Any]] else { throw Unavailable(description: "the runner printed no rows") }
        let found: [Row] = rows.map { row in
            Row(flow: row.first as? String ?? "", rule: row.count > 1 ? row[1] as? String ?? "" : "",
                counts: row.dropFirst(2).prefix(13).map { ($0 as? NSNumber)?.intValue ?? -1 },
                paid: ((row.count > 15 ? row[15] : nil) as? [String: Any] ?? [:]).mapValues { ($0 as? NSNumber)?.int64Value ?? -1 })
        }
        let expected = expected
        if found == expected { return "counts agree with results for all \(expected.count) rules" }
        let differing = Set(expected.map { "\($0.flow)/\($0.rule)" }).symmetricDifference(found.map { "\($0.flow)/\($0.rule)" })
            .union(zip(found, expected).filter { $0 != $1 }.map { "\($1.flow)/\($1.rule)" })
        return "COUNTS DIFFER from results for \(differing.sorted().joined(separator: ", "))"
    }

    private func decode(_ output: Data) throws -> [String: Any] {
        guard let object = try JSONSerialization.jsonObject(with: output) as? [String: Any] else {
            throw Unavailable(description: "the runner printed no JSON object")
        }
        return object
    }

    private func run(_ arguments: [String]) throws -> Data {
        let errorFile = FileManager.default.temporaryDirectory.appendingPathComponent("retention-sync-bench-stderr-\(UUID().uuidString)")
        try Data().write(to: errorFile)
        defer { try? FileManager.default.removeItem(at: errorFile) }
        let process = Process()
        process.executableURL = python
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = try FileHandle(forWritingTo: errorFile)
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            let errors = (try? String(contentsOf: errorFile, encoding: .utf8)) ?? ""
            throw Unavailable(description: "\(python.path) exited with \(process.terminationStatus): \(errors.suffix(2000))")
        }
        return data
    }

    static func seconds(_ value: Double) -> String {
        String(format: "%.1f s", value)
    }

    static func megabytes(_ kilobytes: Double) -> String {
        kilobytes >= 1024 * 1024 ? String(format: "%.2f GB", kilobytes / 1024 / 1024) : String(format: "%.0f MB", kilobytes / 1024)
    }

    /// The query (argv[1]) in one DuckDB connection, memory limit argv[2], spilling to argv[3]; peak RSS
    /// of this process. VmHWM, not `ru_maxrss`: a spawned child's `ru_maxrss` starts at its parent's peak.
    static let duckDBRunner = """
        import json, sys, time
        import duckdb
        def peak(pid):
            return int([line.split()[1] for line in open(f"/proc/{pid}/status") if line.startswith("VmHWM:")][0])
        started = time.monotonic()
        connection = duckdb.connect()
        connection.execute("SET enable_progress_bar = false")
        connection.execute(f"SET memory_limit = '{sys.argv[2]}'")
        connection.execute(f"SET temp_directory = '{sys.argv[3]}'")
        rows = connection.sql(sys.argv[1]).fetchall()
        seconds = time.monotonic() - started
        print(json.dumps({"version": duckdb.__version__, "seconds": seconds, "peakKilobytes": peak("self"),
                          "rows": [[int(v) if hasattr(v, "as_integer_ratio") and not isinstance(v, float) else v for v in row] for row in rows]}))
        """

    /// The tables block (argv[1]) and the query (argv[2]) on a local session over every core, driver
    /// memory argv[3], spilling to argv[4]; the JVM's peak RSS is read from /proc before the session stops.
    static let sparkRunner = """
        import json, sys, time
        from pyspark.sql import SparkSession
        def peak(pid):
            return int([line.split()[1] for line in open(f"/proc/{pid}/status") if line.startswith("VmHWM:")][0])
        started = time.monotonic()
        spark = (SparkSession.builder.master("local[*]").appName("retention-sync-bench")
                 .config("spark.driver.memory", sys.argv[3]).config("spark.local.dir", sys.argv[4])
                 .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false").getOrCreate())
        ready = time.monotonic()
        exec(sys.argv[1], {"spark": spark})
        rows = [[dict(v) if isinstance(v, dict) else v for v in row] for row in spark.sql(sys.argv[2]).collect()]
        done = time.monotonic()
        jvm = peak(spark.sparkContext._gateway.proc.pid)
        version = spark.version
        spark.stop()
        print(json.dumps({"version": version, "startSeconds": ready - started, "querySeconds": done - ready, "jvmPeakKilobytes": jvm,
                          "peakKilobytes": peak("self"), "rows": rows}))
        """
}

private extension Dictionary where Key == String, Value == Any {
    func number(_ key: String) -> Double {
        (self[key] as? NSNumber)?.doubleValue ?? .nan
    }

    func string(_ key: String) -> String {
        self[key] as? String ?? "?"
    }
}
