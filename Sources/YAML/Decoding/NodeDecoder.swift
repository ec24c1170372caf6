/// The `Decoder` for one node; it is also that node's single-value container.
final class NodeDecoder: Decoder, SingleValueDecodingContainer {
    let node: YAMLNode
    let codingPath: [any CodingKey]
    let context: DecodingContext
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    init(node: YAMLNode, codingPath: [any CodingKey], context: DecodingContext) {
        self.node = node
        self.codingPath = codingPath
        self.context = context
    }

    var keyPath: String { KeyPathText.render(codingPath) }

    func child(_ node: YAMLNode, key: any CodingKey) -> NodeDecoder {
        NodeDecoder(node: node, codingPath: codingPath + [key], context: context)
    }

    /// Runs `body`; when it fails and `T` has a placeholder, records the problem and returns the
    /// placeholder, so decoding goes on and one run reports every problem in the document.
    func recovering<T>(at path: String, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as ProblemError {
            guard let placeholder = (T.self as? any YAMLPlaceholder.Type)?.yamlPlaceholder as? T else { throw error }
            context.record(error.problem, brokenPath: path)
            return placeholder
        }
    }

    /// Decodes through `T(from:)`, turning whatever that code throws into a located problem.
    func decodeValue<T: Decodable>(_ type: T.Type) throws -> T {
        do {
            return try T(from: self)
        } catch let error as ProblemError {
            throw error
        } catch {
            throw ProblemError(problem: problem(for: error))
        }
    }

    func problem(for error: any Error) -> YAMLDecodingError.Problem {
        guard let error = error as? DecodingError else {
            return .init(location: node.location, keyPath: keyPath, message: String(describing: error), kind: .invalidValue)
        }
        switch error {
        case .dataCorrupted(let context):
            return located(context.codingPath, message: context.debugDescription, kind: .invalidValue)
        case .typeMismatch(_, let context):
            return located(context.codingPath, message: context.debugDescription, kind: .typeMismatch)
        case .valueNotFound(_, let context):
            return located(context.codingPath, message: context.debugDescription, kind: .typeMismatch)
        case .keyNotFound(let key, let context):
            let container = self.context.node(at: context.codingPath)
            return .init(location: container.location, keyPath: KeyPathText.render(context.codingPath + [key]),
                         message: "missing required key '\(key.stringValue)'", kind: .missingKey)
        @unknown default:
            return .init(location: node.location, keyPath: keyPath, message: String(describing: error), kind: .invalidValue)
        }
    }

    private func located(_ path: [any CodingKey], message: String, kind: YAMLDecodingError.Problem.Kind) -> YAMLDecodingError.Problem {
        .init(location: context.node(at: path).location, keyPath: KeyPathText.render(path), message: message, kind: kind)
    }

    func mismatch(_ expected: String, hint: String? = nil) -> ProblemError {
        ProblemError(problem: .init(location: node.location, keyPath: keyPath,
                                    message: "expected \(expected), found \(Self.describe(node))", hint: hint, kind: .typeMismatch))
    }

    static func describe(_ node: YAMLNode) -> String {
        switch node.kind {
        case .mapping: return "a mapping"
        case .sequence: return "a sequence"
        case .scalar(let scalar):
            switch scalar.resolved {
            case .null: return scalar.text.isEmpty ? "an empty value" : "null"
            case .string(let text):
                let shown = text.count > 60 ? String(text.prefix(57)) + "..." : text
                return "\"\(shown)\""
            case .bool, .int, .float: return scalar.text
            }
        }
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case .mapping(let pairs) = node.kind else { throw mismatch("a mapping") }
        context.register(path: keyPath, pairs: pairs)
        return KeyedDecodingContainer(KeyedContainer<Key>(decoder: self, pairs: pairs))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case .sequence(let items) = node.kind else { throw mismatch("a sequence") }
        return UnkeyedContainer(decoder: self, items: items)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { self }

    private var scalar: YAMLScalar? { node.scalar }

    func decodeNil() -> Bool {
        if case .null = scalar?.resolved { return true }
        return false
    }

    func decode(_ type: Bool.Type) throws -> Bool {
        if case .bool(let value) = scalar?.resolved { return value }
        var hint: String?
        if let text = scalar?.text, ["yes", "no", "on", "off", "y", "n"].contains(text.lowercased()) {
            hint = "YAML 1.2 booleans are only true and false"
        }
        throw mismatch("a boolean (true or false)", hint: hint)
    }

    /// Any non-null scalar reads as its source text, so unquoted ids and versions stay as written.
    func decode(_ type: String.Type) throws -> String {
        guard let scalar else { throw mismatch("a string") }
        if case .null = scalar.resolved { throw mismatch("a string", hint: "quote it to write the text \"\(scalar.text)\"") }
        return scalar.text
    }

    func decode(_ type: Double.Type) throws -> Double {
        switch scalar?.resolved {
        case .float(let value)?: return value
        case .int(let value)?: return Double(value)
        default: throw mismatch("a number")
        }
    }

    func decode(_ type: Float.Type) throws -> Float { Float(try decode(Double.self)) }

    private func integer<I: FixedWidthInteger>(_ type: I.Type) throws -> I {
        guard case .int(let value)? = scalar?.resolved else { throw mismatch("an integer") }
        guard let exact = I(exactly: value) else {
            throw ProblemError(problem: .init(location: node.location, keyPath: keyPath,
                                              message: "\(value) is out of range (\(I.min)...\(I.max))", kind: .invalidValue))
        }
        return exact
    }

    func decode(_ type: Int.Type) throws -> Int { try integer(type) }
    func decode(_ type: Int8.Type) throws -> Int8 { try integer(type) }
    func decode(_ type: Int16.Type) throws -> Int16 { try integer(type) }
    func decode(_ type: Int32.Type) throws -> Int32 { try integer(type) }
    func decode(_ type: Int64.Type) throws -> Int64 { try integer(type) }
    func decode(_ type: UInt.Type) throws -> UInt { try integer(type) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try integer(type) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try integer(type) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try integer(type) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try integer(type) }

    func decode<T: Decodable>(_ type: T.Type) throws -> T { try decodeValue(type) }
}

struct KeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let decoder: NodeDecoder
    let pairs: [YAMLPair]
    var codingPath: [any CodingKey] { decoder.codingPath }

    var allKeys: [Key] {
        pairs.compactMap { pair in pair.key.scalar.flatMap { Key(stringValue: $0.text) } }
    }

    private func value(for key: Key) -> YAMLNode? {
        decoder.context.ask(path: decoder.keyPath, key: key.stringValue)
        return pairs.first { $0.key.scalar?.text == key.stringValue }?.value
    }

    private func child(for key: Key) throws -> NodeDecoder {
        guard let value = value(for: key) else {
            throw ProblemError(problem: .init(location: decoder.node.location,
                                              keyPath: KeyPathText.appending(key.stringValue, to: decoder.keyPath),
                                              message: "missing required key '\(key.stringValue)'", kind: .missingKey))
        }
        return decoder.child(value, key: key)
    }

    func contains(_ key: Key) -> Bool { value(for: key) != nil }

    func decodeNil(forKey key: Key) throws -> Bool {
        guard let value = value(for: key) else { return true }
        if case .null = value.scalar?.resolved { return true }
        return false
    }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try decoder.recovering(at: KeyPathText.appending(key.stringValue, to: decoder.keyPath)) { try child(for: key).decodeValue(type) }
    }
    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool {
        try decoder.recovering(at: KeyPathText.appending(key.stringValue, to: decoder.keyPath)) { try child(for: key).decodeValue(type) }
    }
    func decode(_ type: String.Type, forKey key: Key) throws -> String {
        try decoder.recovering(at: KeyPathText.appending(key.stringValue, to: decoder.keyPath)) { try child(for: key).decodeValue(type) }
    }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double {
        try decoder.recovering(at: KeyPathText.appending(key.stringValue, to: decoder.keyPath)) { try child(for: key).decodeValue(type) }
    }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float {
        try decoder.recovering(at: KeyPathText.appending(key.stringValue, to: decoder.keyPath)) { try child(for: key).decodeValue(type) }
    }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int {
        try decoder.recovering(at: KeyPathText.appending(key.stringValue, to: decoder.keyPath)) { try child(for: key).decodeValue(type) }
    }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 {
        try decoder.recovering(at: KeyPathText.appending(key.stringValue, to: decoder.keyPath)) { try child(for: key).decodeValue(type) }
    }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 {
        try decoder.recovering(at: KeyPathText.appending(key.stringValue, to: decoder.keyPath)) { try child(for: key).decodeValue(type) }
    }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 {
        try decoder.recovering(at: KeyPathText.appending(key.stringValue, to: decoder.keyPath)) { try child(for: key).decodeValue(type) }
    }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 {
        try decoder.recovering(at: KeyPathText.appending(key.stringValue, to: decoder.keyPath)) { try child(for: key).decodeValue(type) }
    }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt {
        try decoder.recovering(at: KeyPathText.appending(key.stringValue, to: decoder.keyPath)) { try child(for: key).decodeValue(type) }
    }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 {
        try decoder.recovering(at: KeyPathText.appending(key.stringValue, to: decoder.keyPath)) { try child(for: key).decodeValue(type) }
    }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 {
        try decoder.recovering(at: KeyPathText.appending(key.stringValue, to: decoder.keyPath)) { try child(for: key).decodeValue(type) }
    }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 {
        try decoder.recovering(at: KeyPathText.appending(key.stringValue, to: decoder.keyPath)) { try child(for: key).decodeValue(type) }
    }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 {
        try decoder.recovering(at: KeyPathText.appending(key.stringValue, to: decoder.keyPath)) { try child(for: key).decodeValue(type) }
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        try child(for: key).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try child(for: key).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder {
        guard let key = Key(stringValue: "super") else { throw decoder.mismatch("a mapping with a 'super' key") }
        return try superDecoder(forKey: key)
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        let value = value(for: key) ?? YAMLNode(kind: .scalar(YAMLScalar(text: "", isQuoted: false)), location: decoder.node.location)
        return decoder.child(value, key: key)
    }
}

struct UnkeyedContainer: UnkeyedDecodingContainer {
    let decoder: NodeDecoder
    let items: [YAMLNode]
    private(set) var currentIndex = 0

    init(decoder: NodeDecoder, items: [YAMLNode]) {
        self.decoder = decoder
        self.items = items
    }

    var codingPath: [any CodingKey] { decoder.codingPath }
    var count: Int? { items.count }
    var isAtEnd: Bool { currentIndex >= items.count }

    private mutating func next() throws -> NodeDecoder {
        guard !isAtEnd else {
            throw ProblemError(problem: .init(location: decoder.node.location, keyPath: decoder.keyPath,
                                              message: "expected more than \(items.count) items", kind: .invalidValue))
        }
        defer { currentIndex += 1 }
        return decoder.child(items[currentIndex], key: IndexKey(index: currentIndex))
    }

    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd, case .null = items[currentIndex].scalar?.resolved else { return false }
        currentIndex += 1
        return true
    }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        let item = try next()
        return try decoder.recovering(at: item.keyPath) { try item.decodeValue(type) }
    }
    mutating func decode(_ type: Bool.Type) throws -> Bool {
        let item = try next()
        return try decoder.recovering(at: item.keyPath) { try item.decodeValue(type) }
    }
    mutating func decode(_ type: String.Type) throws -> String {
        let item = try next()
        return try decoder.recovering(at: item.keyPath) { try item.decodeValue(type) }
    }
    mutating func decode(_ type: Double.Type) throws -> Double {
        let item = try next()
        return try decoder.recovering(at: item.keyPath) { try item.decodeValue(type) }
    }
    mutating func decode(_ type: Float.Type) throws -> Float {
        let item = try next()
        return try decoder.recovering(at: item.keyPath) { try item.decodeValue(type) }
    }
    mutating func decode(_ type: Int.Type) throws -> Int {
        let item = try next()
        return try decoder.recovering(at: item.keyPath) { try item.decodeValue(type) }
    }
    mutating func decode(_ type: Int8.Type) throws -> Int8 {
        let item = try next()
        return try decoder.recovering(at: item.keyPath) { try item.decodeValue(type) }
    }
    mutating func decode(_ type: Int16.Type) throws -> Int16 {
        let item = try next()
        return try decoder.recovering(at: item.keyPath) { try item.decodeValue(type) }
    }
    mutating func decode(_ type: Int32.Type) throws -> Int32 {
        let item = try next()
        return try decoder.recovering(at: item.keyPath) { try item.decodeValue(type) }
    }
    mutating func decode(_ type: Int64.Type) throws -> Int64 {
        let item = try next()
        return try decoder.recovering(at: item.keyPath) { try item.decodeValue(type) }
    }
    mutating func decode(_ type: UInt.Type) throws -> UInt {
        let item = try next()
        return try decoder.recovering(at: item.keyPath) { try item.decodeValue(type) }
    }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 {
        let item = try next()
        return try decoder.recovering(at: item.keyPath) { try item.decodeValue(type) }
    }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 {
        let item = try next()
        return try decoder.recovering(at: item.keyPath) { try item.decodeValue(type) }
    }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 {
        let item = try next()
        return try decoder.recovering(at: item.keyPath) { try item.decodeValue(type) }
    }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 {
        let item = try next()
        return try decoder.recovering(at: item.keyPath) { try item.decodeValue(type) }
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        try next().container(keyedBy: type)
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        try next().unkeyedContainer()
    }

    mutating func superDecoder() throws -> any Decoder { try next() }
}
