import Basics
import Testing
import YAML

private struct Message: Decodable, Equatable {
    var name: String
    var header: String
    var body: String?
    var productId: String?
    var enabled: Bool?
    var weight: Int?
    var ratio: Double?
}

private struct Flow: Decodable {
    struct Rule: Decodable {
        struct Response: Decodable {
            var message: String
        }
        var products: [String]
        var response: Response
    }
    var name: String
    var rules: [Rule]
}

private struct Country: Decodable {
    var country: String
    var answer: String
    var switchedOn: String
}

private struct Located: Decodable {
    var name: String
    var location: Basics.SourceLocation?

    enum CodingKeys: String, CodingKey { case name }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        name = try container.decode(String.self, forKey: .name)
        location = decoder.sourceLocation
    }
}

private struct Locale: Decodable {
    var code: String

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        code = try container.decode(String.self)
        guard code.contains("-") else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "'\(code)' is not a locale like en-US")
        }
    }
}

private struct Localized: Decodable {
    var locales: [Locale]
}

private func node(_ text: String, file: String = "app.yaml") throws -> YAMLNode {
    try #require(try YAMLParser.parse(text, file: file).first).root
}

private func problems<T: Decodable>(_ type: T.Type, _ text: String, file: String = "app.yaml") throws -> [YAMLDecodingError.Problem] {
    do {
        _ = try YAMLDecoder().decode(type, from: try node(text, file: file))
        Issue.record("expected decoding to fail")
        return []
    } catch let error as YAMLDecodingError {
        return error.problems
    }
}

@Suite("Decoding YAML into Decodable types")
struct DecodingTests {
    @Test("the Norway problem: country: NO decodes as the string NO, on and yes too")
    func norwayProblem() throws {
        let value = try YAMLDecoder().decode(Country.self, from: try node("country: NO\nanswer: yes\nswitchedOn: on\n"))
        #expect(value.country == "NO")
        #expect(value.answer == "yes")
        #expect(value.switchedOn == "on")
    }

    @Test("decoding a Bool from NO is a type mismatch with a hint")
    func boolFromNo() throws {
        let found = try problems(Message.self, "name: a\nheader: b\nenabled: NO\n")
        #expect(found.count == 1)
        #expect(found.first?.kind == .typeMismatch)
        #expect(found.first?.message == "expected a boolean (true or false), found \"NO\"")
        #expect(found.first?.keyPath == "enabled")
        #expect(found.first?.location == SourceLocation(file: "app.yaml", line: 3, column: 10))
        #expect(found.first?.hint == "YAML 1.2 booleans are only true and false")
    }

    @Test("unquoted ints, floats and bools decode as strings with their source text")
    func scalarsAsStrings() throws {
        let value = try YAMLDecoder().decode(Message.self, from: try node(
            "name: 007\nheader: 1.10\nbody: True\nproductId: 0x1F\nenabled: true\nweight: 0x1F\nratio: 2\n"))
        #expect(value == Message(name: "007", header: "1.10", body: "True", productId: "0x1F",
                                 enabled: true, weight: 31, ratio: 2))
    }

    @Test("missing optional keys and null values decode as nil")
    func optionals() throws {
        let value = try YAMLDecoder().decode(Message.self, from: try node("name: a\nheader: b\nbody: ~\nweight:\n"))
        #expect(value.body == nil && value.weight == nil && value.productId == nil)
    }

    @Test("a type mismatch names file, line, column and key path")
    func typeMismatchLocation() throws {
        let text = """
        name: winback
        rules:
          - products: [a]
            response:
              message: hello
          - products: [b]
            response:
              message:
                text: nested
        """
        let found = try problems(Flow.self, text, file: "flows/winback.yaml")
        #expect(found.count == 1)
        let problem = try #require(found.first)
        #expect(problem.kind == .typeMismatch)
        #expect(problem.keyPath == "rules[1].response.message")
        #expect(problem.message == "expected a string, found a mapping")
        #expect(problem.description == "flows/winback.yaml:9:9: rules[1].response.message: expected a string, found a mapping")
    }

    @Test("an integer field given text says what it expected and found")
    func intMismatch() throws {
        let found = try problems(Message.self, "name: a\nheader: b\nweight: abc\n")
        #expect(found.first?.message == "expected an integer, found \"abc\"")
        #expect(found.first?.location.line == 3)
    }

    @Test("a missing required key is reported at its mapping with the key path")
    func missingKey() throws {
        let found = try problems(Flow.self, "name: x\nrules:\n  - products: [a]\n")
        #expect(found.count == 1)
        #expect(found.first?.kind == .missingKey)
        #expect(found.first?.keyPath == "rules[0].response")
        #expect(found.first?.location == SourceLocation(file: "app.yaml", line: 3, column: 5))
    }

    @Test("every unknown key is reported at its own place")
    func unknownKeys() throws {
        let found = try problems(Message.self, "name: a\nheader: b\ncolour: red\nflavour: sweet\n")
        #expect(found.map(\.kind) == [.unknownKey, .unknownKey])
        #expect(found.map(\.keyPath) == ["colour", "flavour"])
        #expect(found.map(\.location) == [SourceLocation(file: "app.yaml", line: 3, column: 1),
                                          SourceLocation(file: "app.yaml", line: 4, column: 1)])
        #expect(found.first?.description.hasPrefix("app.yaml:3:1: colour: unknown key 'colour'") == true)
    }

    @Test("a near-miss unknown key suggests the key that was meant")
    func didYouMean() throws {
        let found = try problems(Message.self, "name: a\nheader: b\nbdy: text\n")
        #expect(found.count == 1)
        #expect(found.first?.message == "unknown key 'bdy'")
        #expect(found.first?.hint == "did you mean 'body'?")
    }

    @Test("a misspelt required key reports the missing key and the near miss together")
    func misspeltRequiredKey() throws {
        let found = try problems(Message.self, "name: a\nheadr: b\n")
        #expect(Set(found.map(\.kind)) == [.missingKey, .unknownKey])
        #expect(found.first { $0.kind == .unknownKey }?.hint == "did you mean 'header'?")
    }

    @Test("unknown keys inside sequences carry the index in their key path")
    func nestedUnknownKey() throws {
        let found = try problems(Flow.self, "name: x\nrules:\n  - products: [a]\n    response:\n      message: m\n      mesage: n\n")
        #expect(found.first?.keyPath == "rules[0].response.mesage")
        #expect(found.first?.location == SourceLocation(file: "app.yaml", line: 6, column: 7))
    }

    @Test("a DecodingError thrown by a custom init becomes an invalid value at its place")
    func customInvalidValue() throws {
        let found = try problems(Localized.self, "locales:\n  - en-US\n  - french\n")
        #expect(found.count == 1)
        #expect(found.first?.kind == .invalidValue)
        #expect(found.first?.keyPath == "locales[1]")
        #expect(found.first?.location == SourceLocation(file: "app.yaml", line: 3, column: 5))
        #expect(found.first?.message == "'french' is not a locale like en-US")
    }

    @Test("a custom init can read where its value was written")
    func sourceLocation() throws {
        let value = try YAMLDecoder().decode([Located].self, from: try node("- name: a\n- name: b\n", file: "l.yaml"))
        #expect(value.map(\.location) == [SourceLocation(file: "l.yaml", line: 1, column: 3),
                                           SourceLocation(file: "l.yaml", line: 2, column: 3)])
    }

    @Test("dictionaries with string keys and arrays decode")
    func collections() throws {
        let value = try YAMLDecoder().decode([String: [Int64]].self, from: try node("a: [1, 2]\nb: []\n"))
        #expect(value == ["a": [1, 2], "b": []])
    }

    @Test("anchors and aliases within the cap decode like written-out values")
    func aliases() throws {
        let text = "base: &base\n  - products: [a]\n    response: {message: m}\nname: x\nrules: *base\n"
        struct Wrapper: Decodable { var base: [Flow.Rule]; var name: String; var rules: [Flow.Rule] }
        let value = try YAMLDecoder().decode(Wrapper.self, from: try node(text))
        #expect(value.rules.first?.response.message == "m")
    }

    @Test("an integer too large for its type is an invalid value")
    func outOfRange() throws {
        struct Small: Decodable { var value: Int8 }
        let found = try problems(Small.self, "value: 300\n")
        #expect(found.first?.kind == .invalidValue)
        #expect(found.first?.message.contains("out of range") == true)
    }

    @Test("a YAML 1.1 merge key is an unknown key that explains itself")
    func mergeKey() throws {
        let found = try problems(Message.self, "name: a\nheader: b\n<<: {body: c}\n")
        #expect(found.first?.keyPath == "<<")
        #expect(found.first?.hint?.contains("merge keys are not part of YAML 1.2") == true)
    }

    @Test("several problems print one per line, in file order")
    func description() throws {
        let root = try node("name: a\nheader: b\nzeta: 1\nalpha: 2\n", file: "m.yaml")
        do {
            _ = try YAMLDecoder().decode(Message.self, from: root)
            Issue.record("expected decoding to fail")
        } catch {
            #expect(error.description.split(separator: "\n").map { String($0.prefix(14)) } == ["m.yaml:3:1: ze", "m.yaml:4:1: al"])
        }
    }

    @Test("peeking at one key with unknown-key reports turned off ignores the rest")
    func peekAtKind() throws {
        struct Kind: Decodable { var kind: String }
        var decoder = YAMLDecoder()
        decoder.reportsUnknownKeys = false
        #expect(try decoder.decode(Kind.self, from: try node("kind: Message\nname: a\n")).kind == "Message")
    }
}
