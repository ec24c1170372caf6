import Basics
import Testing
import YAML

private func parse(_ text: String, file: String = "app.yaml", limits: YAMLLimits = .default) throws -> [YAMLDocument] {
    try YAMLParser.parse(text, file: file, limits: limits)
}

private func parseError(_ text: String, file: String = "app.yaml", limits: YAMLLimits = .default) -> YAMLError? {
    do {
        _ = try YAMLParser.parse(text, file: file, limits: limits)
        return nil
    } catch {
        return error
    }
}

private func resolved(_ text: String) throws -> YAMLScalar.Resolved? {
    try parse("value: \(text)\n").first?.root["value"]?.scalar?.resolved
}

@Suite("Parsing YAML")
struct ParsingTests {
    @Test("the Norway problem: NO, on, yes and off stay strings")
    func norwayProblem() throws {
        for word in ["NO", "no", "No", "on", "yes", "Yes", "off", "y", "n"] {
            #expect(try resolved(word) == .string(word))
        }
    }

    @Test("only true/True/TRUE and false/False/FALSE are booleans")
    func booleans() throws {
        for word in ["true", "True", "TRUE"] { #expect(try resolved(word) == .bool(true)) }
        for word in ["false", "False", "FALSE"] { #expect(try resolved(word) == .bool(false)) }
        #expect(try resolved("tRUE") == .string("tRUE"))
    }

    @Test("null, ~ and an empty value are null")
    func nulls() throws {
        for word in ["null", "Null", "NULL", "~", ""] { #expect(try resolved(word) == .null) }
    }

    @Test("integers resolve in decimal, octal (0o) and hex (0x)")
    func integers() throws {
        #expect(try resolved("0x1F") == .int(31))
        #expect(try resolved("0o17") == .int(15))
        #expect(try resolved("-42") == .int(-42))
        #expect(try resolved("+7") == .int(7))
        #expect(try resolved("0x") == .string("0x"))
        #expect(try resolved("99999999999999999999") == .string("99999999999999999999"))
    }

    @Test("floats resolve by the core pattern, with .inf and .nan")
    func floats() throws {
        #expect(try resolved("1.5") == .float(1.5))
        #expect(try resolved("-.5e3") == .float(-500))
        #expect(try resolved(".inf") == .float(.infinity))
        #expect(try resolved("-.Inf") == .float(-.infinity))
        guard case .float(let nan)? = try resolved(".nan") else { Issue.record("expected a float"); return }
        #expect(nan.isNaN)
        #expect(try resolved("1.2.3") == .string("1.2.3"))
    }

    @Test("quoted scalars are always strings")
    func quotedScalars() throws {
        let root = try #require(try parse("a: 'true'\nb: \"123\"\nc: |\n  null\n").first?.root)
        #expect(root["a"]?.scalar == YAMLScalar(text: "true", isQuoted: true, resolved: .string("true")))
        #expect(root["b"]?.scalar?.resolved == .string("123"))
        #expect(root["c"]?.scalar?.resolved == .string("null\n"))
    }

    @Test("explicit core tags are honoured")
    func tags() throws {
        let root = try #require(try parse("a: !!str 123\nb: !!float 2\n").first?.root)
        #expect(root["a"]?.scalar?.resolved == .string("123"))
        #expect(root["b"]?.scalar?.resolved == .float(2))
        #expect(parseError("a: !!int abc\n")?.message.contains("not a valid !!int") == true)
    }

    @Test("the non-specific tag ! keeps a plain scalar a string")
    func nonSpecificTag() throws {
        let root = try #require(try parse("a: ! 123\nb: ! true\n").first?.root)
        #expect(root["a"]?.scalar?.resolved == .string("123"))
        #expect(root["b"]?.scalar?.resolved == .string("true"))
    }

    @Test("every node knows its file, line and column, counted from 1")
    func locations() throws {
        let root = try #require(try parse("kind: Message\nbody:\n  header: Hi\n  items:\n    - one\n", file: "m.yaml").first?.root)
        #expect(root.location == SourceLocation(file: "m.yaml", line: 1, column: 1))
        #expect(root["body"]?["header"]?.location == SourceLocation(file: "m.yaml", line: 3, column: 11))
        guard case .sequence(let items)? = root["body"]?["items"]?.kind else { Issue.record("expected a sequence"); return }
        #expect(items.first?.location == SourceLocation(file: "m.yaml", line: 5, column: 7))
    }

    @Test("a multi-document stream gives one document per --- with its own location")
    func multiDocument() throws {
        let documents = try parse("kind: App\n---\nkind: Message\n---\n# comment\nkind: Flow\n", file: "all.yaml")
        #expect(documents.count == 3)
        #expect(documents.map { $0.root["kind"]?.scalar?.text } == ["App", "Message", "Flow"])
        #expect(documents.map(\.location.line) == [1, 2, 4])
        #expect(documents[2].root["kind"]?.location == SourceLocation(file: "all.yaml", line: 6, column: 7))
    }

    @Test("an empty file has no documents")
    func emptyFile() throws {
        #expect(try parse("").isEmpty)
        #expect(try parse("# only a comment\n").isEmpty)
    }

    @Test("a duplicate key reports both places")
    func duplicateKey() throws {
        let error = try #require(parseError("name: a\nbody: b\nname: c\n"))
        #expect(error.location == SourceLocation(file: "app.yaml", line: 3, column: 1))
        #expect(error.related == SourceLocation(file: "app.yaml", line: 1, column: 1))
        #expect(error.message.contains("duplicate key 'name'"))
        #expect(error.description.hasPrefix("app.yaml:3:1: duplicate key 'name', first written at 1:1"))
    }

    @Test("keys equal by value are duplicates, a quoted and a plain 1 are not")
    func duplicateByValue() throws {
        #expect(parseError("1: a\n0x1: b\n")?.related?.line == 1)
        #expect(parseError("1: a\n'1': b\n") == nil)
    }

    @Test("a tab used for indentation reports its 1-based line and column")
    func tabIndentation() throws {
        let error = try #require(parseError("app:\n  name: x\n\tbundle: y\n"))
        #expect(error.location.line == 3)
        #expect(error.location.column == 1)
        #expect(error.message.contains("tabs cannot indent YAML"))
    }

    @Test("bad indentation reports the 1-based line and column where it goes wrong")
    func badIndentation() throws {
        let error = try #require(parseError("app:\n  name: x\n bundle: y\n"))
        #expect(error.location == SourceLocation(file: "app.yaml", line: 3, column: 2))
        #expect(error.description.hasPrefix("app.yaml:3:2: "))
    }

    @Test("an unclosed quote reports where the scalar started")
    func unclosedQuote() throws {
        let error = try #require(parseError("a: b\nc: \"open\n"))
        #expect(error.location.line >= 2)
        #expect(error.message.contains("quoted scalar"))
    }

    @Test("anchors and aliases within the cap expand to the anchored value")
    func aliases() throws {
        let root = try #require(try parse("base: &b\n  locale: en-US\n  header: Hi\ncopy: *b\n").first?.root)
        #expect(root["copy"]?["header"]?.scalar?.text == "Hi")
        #expect(root["copy"]?.location.line == 4)
        #expect(root["copy"]?["header"]?.location.line == 3)
    }

    @Test("an alias to an unknown anchor is an error")
    func unknownAlias() throws {
        let error = try #require(parseError("a: *nowhere\n"))
        #expect(error.message.contains("'*nowhere'"))
        #expect(error.location == SourceLocation(file: "app.yaml", line: 1, column: 4))
    }

    @Test("an unquoted * (the manifests' wildcard) says to quote it, not to avoid aliases")
    func bareWildcard() throws {
        for text in ["products: *\n", "locales: [en-US, *]\n"] {
            let error = try #require(parseError(text))
            #expect(error.message.contains("a bare * starts an alias"), "\(text)")
            #expect(error.hint == #"quote it: "*" (or write ["*"] in a list)"#, "\(text)")
            #expect(error.location.line == 1)
            #expect(error.location.column == text.distance(from: text.startIndex, to: text.firstIndex(of: "*")!) + 1, "\(text)")
        }
    }

    @Test("a billion-laughs alias bomb fails with a clear error")
    func aliasBomb() throws {
        var text = "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n"
        let names = ["a", "b", "c", "d", "e", "f", "g", "h", "i"]
        for (previous, name) in zip(names, names.dropFirst()) {
            text += "\(name): &\(name) [" + Array(repeating: "*\(previous)", count: 9).joined(separator: ",") + "]\n"
        }
        let error = try #require(parseError(text, file: "bomb.yaml"))
        #expect(error.message.contains("aliases expand to more than 10000 nodes"))
        #expect(error.location.file == "bomb.yaml")
        #expect(error.location.line <= 6)
    }

    @Test("an input over the size limit is refused before parsing")
    func oversizedInput() throws {
        let text = String(repeating: "k: v\n", count: 100)
        let error = try #require(parseError(text, limits: YAMLLimits(maxInputBytes: 64)))
        #expect(error.location == SourceLocation(file: "app.yaml", line: 1, column: 1))
        #expect(error.message.contains("over the limit of 64 bytes"))
        #expect(YAMLLimits.default.maxInputBytes == 8 * 1024 * 1024)
    }

    @Test("nesting deeper than the limit is refused")
    func deepNesting() throws {
        let text = String(repeating: "[", count: 300) + String(repeating: "]", count: 300)
        #expect(parseError(text)?.message.contains("nest deeper than 256") == true)
    }

    @Test("invalid UTF-8 reports a location instead of crashing")
    func invalidUTF8() throws {
        do {
            _ = try YAMLParser.parse(Array("a: b\nc: ".utf8) + [0xFF, 0xFE, 0x0A], file: "bad.yaml")
            Issue.record("expected an error")
        } catch {
            #expect(error.location.file == "bad.yaml")
            #expect(error.location.line == 2)
        }
    }
}
