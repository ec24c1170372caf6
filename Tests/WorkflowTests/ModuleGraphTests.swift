import Foundation
import Testing
import TestSupport

/// Package.swift declares every edge between the project's modules, and only edges the code uses:
/// each target's `import` lines name exactly its declared dependencies. The manual's module graph
/// (docs/development.md) is made from the same declarations.
@Suite("The module graph")
struct ModuleGraphTests {
    struct Target: Equatable {
        var name: String
        var kind: String
        var path: String
        var dependencies: [String]
    }

    /// The targets of Package.swift, read from its text: the `name:`, `dependencies:` and `path:` of
    /// every `.target`, `.executableTarget`, `.testTarget` and `.systemLibrary`.
    static func targets() throws -> [Target] {
        let manifest = try Repository.text("Package.swift")
        let start = /\.(target|executableTarget|testTarget|systemLibrary)\(\s*name:\s*"([^"]+)"/
        var targets: [Target] = []
        for match in manifest.matches(of: start) {
            // The declaration runs to the parenthesis that closes it.
            var depth = 0
            var end = match.range.lowerBound
            for index in manifest[match.range.lowerBound...].indices {
                let character = manifest[index]
                if character == "(" { depth += 1 }
                if character == ")" {
                    depth -= 1
                    if depth == 0 { end = index; break }
                }
            }
            let declaration = String(manifest[match.range.lowerBound..<end])
            var dependencies: [String] = []
            if let list = declaration.firstMatch(of: /dependencies:\s*\[([^\]]*)\]/) {
                dependencies = list.1.matches(of: /"([^"]+)"/).map { String($0.1) }
            }
            let kind = String(match.1), name = String(match.2)
            let path = declaration.firstMatch(of: /path:\s*"([^"]+)"/).map { String($0.1) }
                ?? (kind == "testTarget" ? "Tests/\(name)" : "Sources/\(name)")
            targets.append(Target(name: name, kind: kind, path: path, dependencies: dependencies))
        }
        return targets
    }

    /// The project modules a target's Swift files import.
    static func imports(of target: Target, among modules: Set<String>) throws -> Set<String> {
        let folder = Repository.url(target.path)
        let files = FileManager.default.enumerator(atPath: folder.path)?.compactMap { $0 as? String }.filter { $0.hasSuffix(".swift") } ?? []
        var found = Set<String>()
        let line = /^\s*(?:@testable\s+)?(?:(?:public|package|internal|fileprivate|private)\s+)?import\s+([A-Za-z_][A-Za-z0-9_]*)/
            .anchorsMatchLineEndings()
        for file in files {
            let text = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
            for match in text.matches(of: line) where modules.contains(String(match.1)) { found.insert(String(match.1)) }
        }
        return found
    }

    @Test("every target imports exactly the modules Package.swift declares for it: no undeclared edge, none unused")
    func importsMatchDeclarations() throws {
        let targets = try Self.targets()
        #expect(targets.count > 20, "Package.swift was not read")
        let modules = Set(targets.map(\.name))
        for target in targets where target.kind != "systemLibrary" {
            let imported = try Self.imports(of: target, among: modules)
            let declared = Set(target.dependencies)
            let undeclared = imported.subtracting(declared).sorted()
            let unused = declared.subtracting(imported).sorted()
            #expect(undeclared.isEmpty, "\(target.name) imports \(undeclared) without declaring them in Package.swift")
            #expect(unused.isEmpty, "\(target.name) declares \(unused) in Package.swift but imports none of them")
        }
    }

    /// The targets a library product of Package.swift lists.
    static func productTargets(_ product: String) throws -> [String] {
        let manifest = try Repository.text("Package.swift")
        guard let match = manifest.firstMatch(of: try Regex(#"\.library\(name:\s*""# + product + #"",\s*targets:\s*\[([^\]]*)\]"#)),
              let list = match.output[1].substring else { return [] }
        return list.matches(of: /"([^"]+)"/).map { String($0.1) }
    }

    @Test("the benchmark package imports exactly the modules the RetentionSyncModules product lists, and ships in no product of the tool")
    func benchmarkPackageImportsWhatTheProductLists() throws {
        let listed = Set(try Self.productTargets("RetentionSyncModules"))
        #expect(listed.count > 10, "Package.swift's RetentionSyncModules product was not read")
        let modules = Set(try Self.targets().map(\.name))
        #expect(listed.isSubset(of: modules), "the product lists targets Package.swift does not declare: \(listed.subtracting(modules).sorted())")
        let bench = Target(name: "retention-sync-bench", kind: "executableTarget", path: "Benchmarks/Sources/retention-sync-bench", dependencies: [])
        let imported = try Self.imports(of: bench, among: modules)
        #expect(imported == listed, "imported but not listed: \(imported.subtracting(listed).sorted()); listed but not imported: \(listed.subtracting(imported).sorted())")
        #expect(!modules.contains("retention-sync-bench"), "the benchmark is a target of the tool's package again")
        #expect(try Repository.text("Benchmarks/Package.swift").contains(#".product(name: "RetentionSyncModules", package: "retention-sync")"#))
    }

    @Test("the shipped executables and libraries depend on no test support")
    func shippedProductsHaveNoTestSupport() throws {
        let targets = try Self.targets()
        let support = Set(targets.filter { $0.kind == "target" && $0.path.hasPrefix("Tests/") }.map(\.name))
        #expect(support.isSuperset(of: ["TestSupport", "CommandTestSupport", "ExperimentsTestSupport", "EngineTestSupport"]), "\(support)")
        for target in targets where !target.path.hasPrefix("Tests/") {
            let used = support.intersection(target.dependencies).sorted()
            #expect(used.isEmpty, "\(target.name) depends on test support \(used)")
        }
    }

    /// The manual's table of modules and what each depends on, made from Package.swift.
    static func graph(_ targets: [Target]) -> String {
        var lines = ["| Module | Kind | Depends on |", "|---|---|---|"]
        for target in targets {
            let kind = switch target.kind {
            case "systemLibrary": "C library"
            case "executableTarget": "executable"
            case "testTarget": "tests"
            default: target.path.hasPrefix("Tests/") ? "test support" : "library"
            }
            let dependencies = target.dependencies.map { "`\($0)`" }.joined(separator: ", ")
            lines.append("| `\(target.name)` | \(kind) | \(dependencies.isEmpty ? "—" : dependencies) |")
        }
        return lines.joined(separator: "\n")
    }

    @Test("docs/development.md shows the module graph Package.swift declares (UPDATE_GOLDEN=1 rewrites it and fails)")
    func manualShowsTheGraph() throws {
        let path = "docs/development.md"
        let page = try Repository.text(path)
        let begin = "<!-- module-graph: made from Package.swift by ModuleGraphTests -->\n", end = "\n<!-- module-graph: end -->"
        guard let from = page.range(of: begin), let to = page.range(of: end, range: from.upperBound..<page.endIndex) else {
            Issue.record("\(path) has no module-graph section")
            return
        }
        let expected = Self.graph(try Self.targets())
        if ProcessInfo.processInfo.environment["UPDATE_GOLDEN"] == "1" {
            try (page[..<from.upperBound] + expected + page[to.lowerBound...]).write(to: Repository.url(path), atomically: true, encoding: .utf8)
            // A recording run never passes: the rewritten table is checked by the next, plain run.
            Issue.record("UPDATE_GOLDEN=1: rewrote the module graph in \(path); run the tests again without it")
            return
        }
        #expect(String(page[from.upperBound..<to.lowerBound]) == expected)
    }
}
