import Foundation
import Testing
import TestSupport

/// A function that grows past a screen and a half hides its steps; the limit holds every function
/// in `Sources/`, the executables' included, and a long one is split into named steps.
@Suite("Function lengths")
struct FunctionLengthTests {
    static let limit = 80

    /// Functions still over the limit, by file and name, until they are split; the list only shrinks.
    static let notYetSplit: Set<String> = []

    /// The Swift files under `Sources/`, as paths from the repository's root, in order.
    /// Every Swift file of the tool and of the benchmark package.
    static func sourceFiles() -> [String] {
        ["Sources", "Benchmarks/Sources"].flatMap { root in
            let files = FileManager.default.enumerator(atPath: Repository.url(root).path)?.compactMap { $0 as? String } ?? []
            return files.filter { $0.hasSuffix(".swift") }.sorted().map { root + "/" + $0 }
        }
    }

    @Test("no function in Sources is longer than 80 lines")
    func noLongFunctions() throws {
        var measured = 0
        var tooLong: [String] = []
        var stillLong: Set<String> = []
        for file in Self.sourceFiles() {
            for body in FunctionBodies.find(in: try Repository.text(file)) {
                measured += 1
                guard body.lines > Self.limit else { continue }
                if Self.notYetSplit.contains("\(file) \(body.name)") {
                    stillLong.insert("\(file) \(body.name)")
                } else {
                    tooLong.append("\(file):\(body.line) \(body.name) \(body.lines) lines")
                }
            }
        }
        // A scan that found nothing would pass; the sources hold thousands of functions.
        #expect(measured > 2000, "measured only \(measured) functions in Sources")
        #expect(tooLong.isEmpty, "over \(Self.limit) lines — split them into named steps:\n\(tooLong.joined(separator: "\n"))")
        let split = Self.notYetSplit.subtracting(stillLong).sorted()
        #expect(split.isEmpty, "now within \(Self.limit) lines (or gone) — take them off notYetSplit:\n\(split.joined(separator: "\n"))")
    }

    @Test("every file in Sources scans to balanced braces, outside every string and comment")
    func everyFileScans() throws {
        let unbalanced = try Self.sourceFiles().filter { !FunctionBodies.scan(try Repository.text($0)).bracesBalance }
        #expect(unbalanced.isEmpty, "\(unbalanced)")
    }

    @Test("braces in strings — interpolated, multi-line, raw — do not count")
    func bracesInStrings() {
        let source = #####"""
            func strings() {
                let a = "}"
                let b = "{ \("}" + "\(")")") {"
                let c = #"\(x) "} \#("}") "#
                let d = """
                    }
                    \""" }
                    """
                let e = ##"""
                    "}""" """# not the end
                    """##
            }
            func after() {}
            """#####
        #expect(FunctionBodies.find(in: source).map(\.description) == ["1 strings 12", "13 after 1"])
    }

    @Test("braces in comments — line, block, nested block — do not count")
    func bracesInComments() {
        let source = """
            func commented() {
                // }
                /* } /* nested } */ still a comment } */
                /// {
                let x = 1 // {
            }
            """
        #expect(FunctionBodies.find(in: source).map(\.description) == ["1 commented 6"])
    }

    @Test("closures and nested functions count in the function that holds them, and are named inside it")
    func nestedClosures() {
        let source = """
            struct Outer {
                func outer() {
                    items.map { item in
                        func inner() {
                            print(item)
                        }
                    }
                    for var x in xs { x += 1 }
                    let y = Thing.init(x)
                }
            }
            extension Outer.Inner where T == Int {
                init?(x: Int) {
                    self.init(y: x)
                }
                static func == (a: Outer, b: Outer) -> Bool {
                    true
                }
                var computed: Int {
                    get { 1 }
                }
                var stored: Int = { 2 }()
                subscript(i: Int) -> Int { i }
                deinit {
                }
            }
            """
        #expect(FunctionBodies.find(in: source).map(\.description) == [
            "2 Outer.outer 9", "4 Outer.outer.inner 3",
            "13 Outer.Inner.init 3", "16 Outer.Inner.== 3", "19 Outer.Inner.computed 3", "23 Outer.Inner.subscript 1",
            "24 Outer.Inner.deinit 2",
        ])
    }

    @Test("a requirement without a body is not a function to measure")
    func requirements() {
        let source = """
            protocol Store {
                func read() throws -> Int
                var name: String { get }
                init(path: String)
                static func make() -> Self
            }
            func free() {
                work()
            }
            """
        #expect(FunctionBodies.find(in: source).map(\.description) == ["3 Store.name 1", "7 free 3"])
    }
}
