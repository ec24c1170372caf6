import Foundation
import TestSupport

/// Paths into `fixtures/crypto`, found from this file's location so tests run from any directory.
enum Fixtures {
    static let directory = Repository.url("fixtures/crypto").path

    static func path(_ name: String) -> String {
        directory + "/" + name
    }

    static func text(_ name: String) throws -> String {
        try String(contentsOfFile: path(name), encoding: .utf8)
    }
}
