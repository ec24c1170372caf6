/// The bodies of the functions in a Swift file and how many lines each spans: enough of Swift's
/// lexical grammar (comments, nested block comments, string literals with their interpolations,
/// multi-line and raw strings) that a brace in a string or a comment never counts.
enum FunctionBodies {
    /// One declaration with a body: `func`, `init`, `deinit`, `subscript` or a computed `var`.
    struct Body: Equatable, CustomStringConvertible {
        /// The enclosing types and functions, then the declaration's own name: `Identities.derive`.
        var name: String
        /// The 1-based line of the declaration's keyword.
        var line: Int
        /// The lines the body spans, from its opening brace's to its closing brace's.
        var lines: Int

        var description: String { "\(line) \(name) \(lines)" }
    }

    /// What the scanner leaves of the code: words and punctuation, each with its 1-based line.
    struct Token: Equatable {
        enum Kind: Equatable {
            case word(String)
            case symbol(UInt8)
        }

        var kind: Kind
        var line: Int

        var word: String? {
            if case .word(let word) = kind { return word }
            return nil
        }

        func `is`(_ symbol: Character) -> Bool {
            kind == .symbol(symbol.asciiValue!)
        }
    }

    /// The scan of a file: its tokens, and whether it ended outside every string and comment.
    struct Scan {
        var tokens: [Token]
        var endedInCode: Bool

        /// Every opening brace has its closing one, and no closing brace comes first.
        var bracesBalance: Bool {
            var depth = 0
            for token in tokens {
                if token.is("{") { depth += 1 }
                if token.is("}") {
                    depth -= 1
                    if depth < 0 { return false }
                }
            }
            return depth == 0 && endedInCode
        }
    }

    static func find(in source: String) -> [Body] {
        bodies(in: scan(source).tokens)
    }

    private enum Mode {
        /// Code: the file's own, or an interpolation `\( … )` in a string, with its open parentheses.
        case code(interpolationParentheses: Int?)
        case string(hashes: Int, multiline: Bool)
    }

    private static let newline = UInt8(ascii: "\n"), slash = UInt8(ascii: "/"), star = UInt8(ascii: "*")
    private static let hash = UInt8(ascii: "#"), quote = UInt8(ascii: "\""), backslash = UInt8(ascii: "\\")
    private static let openParenthesis = UInt8(ascii: "("), closeParenthesis = UInt8(ascii: ")")

    private static func isWordByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "_"), UInt8(ascii: "$"), UInt8(ascii: "`"), 0x80...:
            return true
        default:
            return false
        }
    }

    static func scan(_ source: String) -> Scan {
        let bytes = Array(source.utf8)
        var tokens: [Token] = []
        var line = 1
        var index = 0
        var modes: [Mode] = [.code(interpolationParentheses: nil)]

        func byte(_ offset: Int) -> UInt8? {
            offset < bytes.count ? bytes[offset] : nil
        }
        /// Whether `count` hashes follow from `offset`.
        func hashes(_ count: Int, at offset: Int) -> Bool {
            (0..<count).allSatisfy { byte(offset + $0) == hash }
        }

        while index < bytes.count {
            let current = bytes[index]
            switch modes[modes.count - 1] {
            case .string(let hashCount, let multiline):
                if current == backslash, hashes(hashCount, at: index + 1) {
                    let escaped = index + 1 + hashCount
                    if byte(escaped) == openParenthesis {
                        modes.append(.code(interpolationParentheses: 0))
                    } else if byte(escaped) == newline {
                        line += 1
                    }
                    index = escaped + 1
                    continue
                }
                let quotes = multiline ? 3 : 1
                if current == quote, (0..<quotes).allSatisfy({ byte(index + $0) == quote }), hashes(hashCount, at: index + quotes) {
                    modes.removeLast()
                    index += quotes + hashCount
                    continue
                }
                if current == newline { line += 1 }
                index += 1

            case .code(let parentheses):
                if current == newline {
                    line += 1
                    index += 1
                    continue
                }
                if current == slash, byte(index + 1) == slash {
                    while index < bytes.count, bytes[index] != newline { index += 1 }
                    continue
                }
                if current == slash, byte(index + 1) == star {
                    // Swift's block comments nest.
                    var level = 0
                    repeat {
                        if bytes[index] == slash, byte(index + 1) == star {
                            level += 1
                            index += 2
                        } else if bytes[index] == star, byte(index + 1) == slash {
                            level -= 1
                            index += 2
                        } else {
                            if bytes[index] == newline { line += 1 }
                            index += 1
                        }
                    } while level > 0 && index < bytes.count
                    continue
                }
                if current == hash || current == quote {
                    var opening = index
                    while byte(opening) == hash { opening += 1 }
                    if byte(opening) == quote {
                        let multiline = byte(opening + 1) == quote && byte(opening + 2) == quote
                        modes.append(.string(hashes: opening - index, multiline: multiline))
                        index = opening + (multiline ? 3 : 1)
                        continue
                    }
                }
                if let parentheses {
                    if current == closeParenthesis, parentheses == 0 {
                        modes.removeLast()
                        index += 1
                        continue
                    }
                    if current == openParenthesis { modes[modes.count - 1] = .code(interpolationParentheses: parentheses + 1) }
                    if current == closeParenthesis { modes[modes.count - 1] = .code(interpolationParentheses: parentheses - 1) }
                }
                if isWordByte(current) {
                    let start = index
                    while let next = byte(index), isWordByte(next) { index += 1 }
                    let word = String(decoding: bytes[start..<index].filter { $0 != UInt8(ascii: "`") }, as: UTF8.self)
                    tokens.append(Token(kind: .word(word), line: line))
                    continue
                }
                if current != UInt8(ascii: " "), current != UInt8(ascii: "\t"), current != UInt8(ascii: "\r") {
                    tokens.append(Token(kind: .symbol(current), line: line))
                }
                index += 1
            }
        }
        let endedInCode = modes.count == 1
        return Scan(tokens: tokens, endedInCode: endedInCode)
    }

    /// Words that begin the next declaration: met before a body's brace, they say there is no body
    /// (a protocol's requirement).
    private static let declarationWords: Set<String> = [
        "func", "init", "deinit", "subscript", "var", "let", "case", "struct", "class", "enum", "actor", "protocol",
        "extension", "typealias", "associatedtype", "import", "public", "private", "fileprivate", "internal", "package",
        "open", "static", "final", "override", "mutating", "nonmutating", "convenience", "required", "nonisolated",
        "dynamic", "lazy", "weak", "unowned", "indirect", "optional",
    ]
    private static let typeWords: Set<String> = ["struct", "class", "enum", "actor", "protocol", "extension"]

    private static func bodies(in tokens: [Token]) -> [Body] {
        var found: [Body] = []
        var scopes: [(name: String, close: Int)] = []
        for index in tokens.indices {
            while let scope = scopes.last, index > scope.close { scopes.removeLast() }
            guard let word = tokens[index].word, index == 0 || !tokens[index - 1].is(".") else { continue }
            if typeWords.contains(word), let (name, open) = typeHeader(tokens, after: index), let close = closingBrace(tokens, of: open) {
                scopes.append((name, close))
                continue
            }
            guard let (name, open) = functionHeader(tokens, at: index), let close = closingBrace(tokens, of: open) else { continue }
            let qualified = (scopes.map(\.name) + [name]).joined(separator: ".")
            found.append(Body(name: qualified, line: tokens[index].line, lines: tokens[close].line - tokens[open].line + 1))
            scopes.append((name, close))
        }
        return found
    }

    /// A type's name and the index of its opening brace: `struct Name<…>: … where … {`.
    private static func typeHeader(_ tokens: [Token], after keyword: Int) -> (String, Int)? {
        var index = keyword + 1
        var name = ""
        while index < tokens.count, let word = tokens[index].word {
            name += word
            guard index + 1 < tokens.count, tokens[index + 1].is("."), index + 2 < tokens.count, tokens[index + 2].word != nil else { break }
            name += "."
            index += 2
        }
        guard !name.isEmpty, !declarationWords.contains(name), index + 1 < tokens.count else { return nil }
        let next = tokens[index + 1]
        guard next.is("{") || next.is(":") || next.is("<") || next.word == "where" else { return nil }
        guard let open = tokens[(index + 1)...].firstIndex(where: { $0.is("{") || $0.is("}") || $0.is(";") }), tokens[open].is("{") else { return nil }
        return (name, open)
    }

    /// A function-like declaration's name and the index of its body's opening brace.
    private static func functionHeader(_ tokens: [Token], at keyword: Int) -> (String, Int)? {
        let next = keyword + 1 < tokens.count ? tokens[keyword + 1] : nil
        switch tokens[keyword].word {
        case "func":
            guard let next else { return nil }
            var name = next.word ?? ""
            var index = keyword + 1
            if name.isEmpty {
                // An operator: its characters run to the parameters (or the generic parameters).
                while index < tokens.count, case .symbol(let symbol) = tokens[index].kind, symbol != openParenthesis {
                    name += String(UnicodeScalar(symbol))
                    index += 1
                }
            }
            return bodyBrace(tokens, after: next.word == nil ? index - 1 : index).map { (name, $0) }
        case "init":
            guard let next, next.is("(") || next.is("?") || next.is("!") || next.is("<") else { return nil }
            return bodyBrace(tokens, after: keyword).map { ("init", $0) }
        case "deinit":
            guard let next, next.is("{") else { return nil }
            return ("deinit", keyword + 1)
        case "subscript":
            guard let next, next.is("(") || next.is("<") else { return nil }
            return bodyBrace(tokens, after: keyword).map { ("subscript", $0) }
        case "var":
            return computedProperty(tokens, at: keyword)
        default:
            return nil
        }
    }

    /// The first `{` outside parentheses and brackets after a signature, unless the next declaration
    /// (or the end of the enclosing one) comes first.
    private static func bodyBrace(_ tokens: [Token], after start: Int) -> Int? {
        var depth = 0
        for index in tokens.indices where index > start {
            let token = tokens[index]
            if token.is("(") || token.is("[") { depth += 1 }
            if token.is(")") || token.is("]") { depth -= 1 }
            guard depth == 0 else { continue }
            if token.is("{") { return index }
            if token.is("}") || token.is(";") { return nil }
            if let word = token.word, declarationWords.contains(word) { return nil }
        }
        return nil
    }

    /// `var name: Type {` at the start of a declaration, the brace on the keyword's line: a computed
    /// property (or one with observers). A stored property with `=`, or a pattern's `var` in `for`,
    /// `if` or `case`, has none.
    private static func computedProperty(_ tokens: [Token], at keyword: Int) -> (String, Int)? {
        if keyword > 0 {
            let previous = tokens[keyword - 1]
            let startsDeclaration = previous.line < tokens[keyword].line || previous.is(")") || previous.is("{") || previous.is(";")
                || previous.word.map(declarationWords.contains) == true
            guard startsDeclaration else { return nil }
        }
        guard keyword + 2 < tokens.count, let name = tokens[keyword + 1].word, tokens[keyword + 2].is(":") else { return nil }
        var depth = 0
        for index in (keyword + 3)..<tokens.count {
            let token = tokens[index]
            guard token.line == tokens[keyword].line else { return nil }
            if token.is("(") || token.is("[") { depth += 1 }
            if token.is(")") || token.is("]") { depth -= 1 }
            guard depth == 0 else { continue }
            if token.is("{") { return (name, index) }
            if token.is("=") || token.is("}") || token.is(";") { return nil }
        }
        return nil
    }

    private static func closingBrace(_ tokens: [Token], of open: Int) -> Int? {
        var depth = 0
        for index in open..<tokens.count {
            if tokens[index].is("{") { depth += 1 }
            if tokens[index].is("}") {
                depth -= 1
                if depth == 0 { return index }
            }
        }
        return nil
    }
}
