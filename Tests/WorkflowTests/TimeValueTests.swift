import Foundation
import Testing
import TestSupport

/// One time value: library code speaks `UTCTime` (whole milliseconds, one formatter, one parser, one
/// rounding rule for a duration), and Foundation's `Date` stays at the edges that need it — X.509
/// validity and OpenSSL, the JSON date strategy, Foundation's file and timer APIs — and in the files
/// not yet moved over, named here. The list only shrinks: a file that takes up `Date` fails this test.
@Suite("Time values")
struct TimeValueTests {
    /// Files that may name `Date`, each with why.
    static let allowed: [String: String] = [
        "Sources/Basics/Clock.swift": "the clock reads Foundation's time and hands out UTCTime (and Date for the edges below)",
        "Sources/Basics/UTCTime.swift": "the one conversion between Date and UTCTime, and the JSON date strategy",
        "Sources/Crypto/X509Certificate.swift": "X.509 validity, as OpenSSL reads it",
        "Sources/Crypto/X509Chain.swift": "X.509 validity, as OpenSSL reads it",
        "Sources/Crypto/X509Issuing.swift": "X.509 validity, as OpenSSL writes it",
        "Sources/RealtimeServer/SnapshotSource.swift": "Foundation's file modification date",
    ]

    /// Whether a line of code (comments cut off) names the type `Date`.
    static func namesDate(_ line: String) -> Bool {
        let code = line.components(separatedBy: "//").first ?? ""
        return code.range(of: #"(?<![A-Za-z0-9_])Date(?![A-Za-z0-9_])"#, options: .regularExpression) != nil
    }

    @Test("Date appears only in the files allowed to name it, and the list names only files that still do")
    func dateOnlyAtTheEdges() throws {
        var naming: Set<String> = []
        for file in FunctionLengthTests.sourceFiles() where try Repository.text(file).split(separator: "\n").contains(where: { Self.namesDate(String($0)) }) {
            naming.insert(file)
        }
        let unexpected = naming.subtracting(Self.allowed.keys).sorted()
        #expect(unexpected.isEmpty, "these files name Date: use UTCTime (Basics) and convert at the edge: \(unexpected)")
        let stale = Set(Self.allowed.keys).subtracting(naming).sorted()
        #expect(stale.isEmpty, "these files no longer name Date: take them off the list: \(stale)")
    }

    @Test("the scan finds Date in code, not in comments or longer names")
    func scanReadsCode() {
        #expect(Self.namesDate("let now = Date()"))
        #expect(Self.namesDate("func f(at time: Date?)"))
        #expect(!Self.namesDate("/// a Date in a comment"))
        #expect(!Self.namesDate("let x = 1 // Date"))
        #expect(!Self.namesDate("let x: UpdateDate = y"))
        #expect(!Self.namesDate("let dated = DateFormatter()"))
    }
}
