import Basics
import Testing
import YAML

@Suite("Duplicate keys that are sequences or mappings")
struct DuplicateKeyTests {
    @Test("a file of 20,000 distinct sequence keys parses: the check hashes each key once instead of comparing pairs")
    func manyComplexKeysParse() throws {
        let text = (0..<20_000).map { "[\($0)]: 0" }.joined(separator: "\n") + "\n"
        let documents = try YAMLParser.parse(text, file: "keys.yaml")
        guard case .mapping(let pairs)? = documents.first?.root.kind else {
            Issue.record("expected a mapping")
            return
        }
        #expect(pairs.count == 20_000)
    }

    @Test("the last of 20,000 sequence keys repeating the first is reported where it is written")
    func duplicateAmongManyIsFound() {
        let text = (0..<20_000).map { "[\($0), {a: b}]: 0" }.joined(separator: "\n") + "\n[0, {a: b}]: 1\n"
        #expect(throws: YAMLError.self) { try YAMLParser.parse(text, file: "keys.yaml") }
        do {
            _ = try YAMLParser.parse(text, file: "keys.yaml")
        } catch {
            #expect(error.location.line == 20_001)
            #expect(error.related?.line == 1)
        }
    }

    @Test("keys equal as values collide (0x1 is 1), keys that differ only in type do not (\"1\" and 1)")
    func keysCompareByValue() throws {
        #expect(throws: YAMLError.self) { try YAMLParser.parse("[0x1]: a\n[1]: b\n", file: "k.yaml") }
        _ = try YAMLParser.parse("[\"1\"]: a\n[1]: b\n", file: "k.yaml")
        _ = try YAMLParser.parse("[.nan]: a\n[\".nan\"]: b\n", file: "k.yaml")
    }

    @Test("the total size of complex keys per file is bounded, with an error that says so")
    func keyWorkIsBounded() {
        let text = (0..<100).map { "[\($0), \($0)]: 0" }.joined(separator: "\n") + "\n"
        let limits = YAMLLimits(maxKeyNodes: 150)
        do {
            _ = try YAMLParser.parse(text, file: "k.yaml", limits: limits)
            Issue.record("a file over the key budget parsed")
        } catch {
            #expect(error.message.contains("more than 150 nodes"))
        }
    }
}
