import Foundation
import Testing
import TestSupport
import EventContract
@testable import Experiments

/// The Spark SQL of docs/results-sql.md, run on Spark itself — PySpark in local mode, installed with a
/// Java runtime by `.ci/setup --test` — over the same simulated events as the DuckDB test, must give the
/// numbers of `results --format json`. One Spark session serves every Spark test: a single Python
/// process starts the JVM once, runs each window's tables and query exactly as printed, prints every
/// answer as JSON and exits.
@Suite struct SparkTests {
    struct WindowAnswer: Sendable {
        var report: ResultsReport
        var sql: [ResultsSQLStore.Row]
    }

    /// Started by the first test that needs it; every other test awaits the same answers.
    static let session = Task { try await runSession() }

    /// What Spark answered for the facts table, and what the tool made of the same events.
    struct FactsAnswer: Sendable {
        var sql: [[String: String]]
        var tool: [[String: String]]
    }

    @Test func aDataTeamRunningTheManualsSparkFactsSQLOnSparkGetsTheFactsTable() async throws {
        let answers = try await Self.session.value
        let facts = try #require(answers.facts, "the Spark session did not answer for the facts table")
        #expect(facts.tool.count > 200)
        #expect(facts.sql.count == facts.tool.count)
        for (sql, tool) in zip(facts.sql, facts.tool) where sql != tool {
            Issue.record("Spark: \(sql.sorted { $0.key < $1.key }) ≠ tool \(tool.sorted { $0.key < $1.key })")
            break
        }
    }

    @Test(arguments: ResultsSQLStore().windows)
    func aDataTeamRunningTheManualsSparkSQLOnSparkGetsTheNumbersOfTheJSONReport(window: ResultsSQLStore.Window) async throws {
        let answers = try await Self.session.value.windows
        let answer = try #require(answers[window.name], "the Spark session did not answer for \(window)")
        ResultsSQLStore.checkCoverage(answer.report, window)
        let fromReport = ResultsSQLStore.rows(answer.report)
        #expect(answer.sql == fromReport, "Spark, \(window):\n\(ResultsSQLStore.differences(answer.sql, fromReport))")
    }

    @Test func withoutJavaOrPySparkTheSparkTestsFailNamingWhatToInstall() async throws {
        let python = Repository.url(".build/tools/bin/python")
        try #require(FileManager.default.isExecutableFile(atPath: python.path), "\(python.path) is missing: run `bash .ci/setup --test`")
        var environment = ProcessInfo.processInfo.environment
        environment["JAVA_HOME"] = nil
        environment["PATH"] = "/nonexistent"
        let noJava = environment
        @Sendable func failure(_ arguments: [String], _ environment: [String: String]? = nil) -> String {
            do {
                _ = try ResultsSQLStore.run(python, arguments + ["-c", Self.runner, "/nonexistent/jobs.json", "/nonexistent"], environment: environment)
                return "the runner went on"
            } catch {
                return "\(error)"
            }
        }
        // -S leaves out site-packages, where .ci/setup installs pyspark.
        let messages = try await onOwnThread { [failure([], noJava), failure(["-S"])] }
        #expect(messages[0].contains("Java is missing") && messages[0].contains("apt-get install -y openjdk-17-jre-headless"), "\(messages[0])")
        #expect(messages[1].contains("pyspark is not importable") && messages[1].contains("bash .ci/setup --test"), "\(messages[1])")
    }

    static func runSession() async throws -> (windows: [String: WindowAnswer], facts: FactsAnswer?) {
        let python = Repository.url(".build/tools/bin/python")
        guard FileManager.default.isExecutableFile(atPath: python.path) else {
            throw ResultsSQLStore.Unavailable(description: "\(python.path) is missing: run `bash .ci/setup --test` (it installs pyspark, and Java when it is missing)")
        }
        let store = ResultsSQLStore()
        let root = try store.write()
        defer { try? FileManager.default.removeItem(at: root) }
        let tables = try ResultsSQLStore.documented("spark-results-tables", language: "python")
        let query = try ResultsSQLStore.documented("spark-results-sql")
        var reports: [String: ResultsReport] = [:]
        var jobs: [[String: String]] = []
        for window in store.windows {
            reports[window.name] = try store.report(root, window)
            jobs.append(["name": window.name, "tables": ResultsSQLStore.fill(tables, root: root, window),
                         "query": ResultsSQLStore.fill(query, root: root, window)])
        }
        // The facts table's SQL, over events of their own, in the same session.
        let factsStore = try FactsSQLStore(seed: 11)
        defer { factsStore.remove() }
        jobs.append(["name": "facts", "tables": factsStore.fill(try ResultsSQLStore.documented("spark-facts-tables", language: "python", in: "docs/targeting.md")),
                     "query": factsStore.fill(try ResultsSQLStore.documented("spark-facts-sql", in: "docs/targeting.md"))])
        let jobsFile = root.appendingPathComponent("spark-jobs.json")
        try JSONSerialization.data(withJSONObject: jobs, options: [.sortedKeys]).write(to: jobsFile)
        let scratch = root.appendingPathComponent("spark-scratch")
        let output = try await onOwnThread { try ResultsSQLStore.run(python, ["-c", Self.runner, jobsFile.path, scratch.path]) }
        let printed = try #require(try JSONSerialization.jsonObject(with: output) as? [String: Any],
                                   "the Spark runner printed no JSON object: \(String(decoding: output, as: UTF8.self).prefix(500))")
        let byWindow = try #require(printed["answers"] as? [String: Any])
        var answers: [String: WindowAnswer] = [:]
        for (name, report) in reports {
            let rows = try #require(byWindow[name], "no answer for \(name)")
            answers[name] = WindowAnswer(report: report, sql: try ResultsSQLStore.rows(json: try JSONSerialization.data(withJSONObject: rows)))
        }
        let facts = try byWindow["facts"].map {
            FactsAnswer(sql: try FactsSQLStore.objects(rows: $0), tool: try FactsSQLStore.objects(lines: try factsStore.toolLines()))
        }
        return (answers, facts)
    }

    /// Checks for Java first, so a missing runtime is named with its install command rather than as
    /// PySpark's "Java gateway process exited". The session's own time zone is not UTC, so the
    /// page's tables block, which sets it, is what makes intervals exact across daylight-saving changes.
    static let runner = """
        import json, os, re, shutil, subprocess, sys
        java = os.path.join(os.environ["JAVA_HOME"], "bin", "java") if os.environ.get("JAVA_HOME") else shutil.which("java")
        if not java or not os.access(java, os.X_OK):
            sys.exit("Java is missing, and Spark runs on it: run `sudo apt-get install -y openjdk-17-jre-headless` "
                     "(or `bash .ci/setup --test` as root)")
        version = re.search(r'version "(?:1\\.)?(\\d+)', subprocess.run([java, "-version"], capture_output=True, text=True).stderr)
        if not version or int(version.group(1)) < 17:
            sys.exit(f"{java} is not Java 17 or later, which Spark 4 needs: run `sudo apt-get install -y openjdk-17-jre-headless`")
        try:
            from pyspark.sql import SparkSession
        except ImportError as error:
            sys.exit(f"pyspark is not importable ({error}): run `bash .ci/setup --test` (it installs pyspark into .build/tools)")
        jobs, scratch = json.load(open(sys.argv[1])), sys.argv[2]
        spark = (SparkSession.builder.master("local[2]").appName("retention-sync tests")
                 .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
                 .config("spark.sql.shuffle.partitions", "4").config("spark.local.dir", scratch)
                 .config("spark.sql.warehouse.dir", os.path.join(scratch, "warehouse"))
                 # The JIT's first tier only: on these small inputs a quicker start beats faster code.
                 .config("spark.driver.extraJavaOptions", "-XX:TieredStopAtLevel=1")
                 .getOrCreate())
        answers = {}
        try:
            for job in jobs:
                spark.conf.set("spark.sql.session.timeZone", "Europe/London")
                exec(job["tables"], {"spark": spark})
                rows = spark.sql(job["query"]).collect()
                answers[job["name"]] = [[dict(value) if isinstance(value, dict) else value for value in row] for row in rows]
        finally:
            spark.stop()
        print(json.dumps({"answers": answers}, sort_keys=True))
        """
}
