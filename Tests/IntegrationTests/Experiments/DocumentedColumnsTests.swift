import EventContract
import Foundation
import Testing
import TestSupport

/// The SQL in docs/results-sql.md reads event lines by name; every column it names must be a member
/// the contract declares for that stream.
@Suite struct DocumentedColumnsTests {
    /// The columns of each `read_json_auto(…/events/v1/<stream>/…, columns = {…})` in a query.
    static func duckDBColumns(_ query: String) throws -> [(stream: EventStream, columns: [String])] {
        let reads = try Regex(#"read_json_auto\('[^']*/events/v1/(\w+)/[^)]*?columns = \{([^}]*)\}"#)
        return try query.matches(of: reads).map { match in
            let streamName = String(try #require(match.output[1].substring))
            let stream = try #require(EventStream(rawValue: streamName), "\(streamName) is not a stream")
            let list = String(try #require(match.output[2].substring))
            return (stream, list.matches(of: #/(\w+): '/#).map { String($0.output.1) })
        }
    }

    @Test("the documented DuckDB query reads only members the contract declares, from the stream that has them")
    func duckDBColumnsAreDeclaredFields() throws {
        let reads = try Self.duckDBColumns(try DuckDBTests.documentedQuery("duckdb-results-sql"))
        #expect(reads.map(\.stream) == [.decisions, .outcomes])
        for read in reads {
            #expect(!read.columns.isEmpty)
            let declared = Set(read.stream.fields.map(\.rawValue))
            #expect(read.columns.filter { !declared.contains($0) } == [], "\(read.stream.rawValue) columns not in the contract")
        }
    }

    @Test("the documented Athena tables name only members the contract declares")
    func athenaColumnsAreDeclaredFields() throws {
        let text = try Repository.text("docs/results-sql.md")
        let tables = text.matches(of: #/CREATE EXTERNAL TABLE retention_(\w+) \(([^)]*)\)/#)
        #expect(tables.map { String($0.output.1) } == ["decisions", "outcomes"])
        for table in tables {
            let stream = try #require(EventStream(rawValue: String(table.output.1)))
            let columns = table.output.2.split(separator: ",").compactMap { $0.split(whereSeparator: \.isWhitespace).first.map(String.init) }
            let declared = Set(stream.fields.map(\.rawValue))
            #expect(!columns.isEmpty && columns.allSatisfy(declared.contains), "\(stream.rawValue): \(columns)")
        }
    }

    @Test("the documented Spark tables name only members the contract declares, and every one the query reads")
    func sparkColumnsAreDeclaredFields() throws {
        let tables = try ResultsSQLStore.documented("spark-results-tables", language: "python")
        let query = try ResultsSQLStore.documented("spark-results-sql")
        let schemas = tables.matches(of: #/(decisions|outcomes) = \(((?:\s*"[^"]*")+)\)/#)
        #expect(schemas.map { String($0.output.1) } == ["decisions", "outcomes"])
        for schema in schemas {
            let stream = try #require(EventStream(rawValue: String(schema.output.1)))
            let text = schema.output.2.matches(of: #/"([^"]*)"/#).map { String($0.output.1) }.joined()
            let columns = text.matches(of: #/(\w+) (?:STRING|BIGINT)/#).map { String($0.output.1) }
            let declared = Set(stream.fields.map(\.rawValue))
            #expect(!columns.isEmpty && columns.allSatisfy(declared.contains), "\(stream.rawValue): \(columns)")
            #expect(columns.allSatisfy { query.contains($0) }, "\(stream.rawValue): a column the query never reads")
        }
    }
}
