import Basics
internal import CYAML

/// One libyaml event, copied into Swift values so the C event can be freed at once.
enum YAMLEvent {
    case streamStart
    case streamEnd
    case documentStart
    case documentEnd
    case mappingStart(anchor: String?, tag: String?)
    case mappingEnd
    case sequenceStart(anchor: String?, tag: String?)
    case sequenceEnd
    case scalar(value: String, anchor: String?, tag: String?, isQuoted: Bool)
    case alias(anchor: String)
}

/// A zero-based libyaml mark, kept raw until it is turned into a `SourceLocation`.
struct YAMLMark {
    var line: Int
    var column: Int
}

/// Owns one libyaml parser and the input buffer it reads; both are freed in `deinit`.
/// The parser lives at a fixed address because libyaml keeps a pointer to itself for string input.
final class LibYAMLEventReader {
    private let parser: UnsafeMutablePointer<yaml_parser_t>
    /// The input, copied once to an address that stays put for libyaml; also read back for error marks.
    private let buffer: UnsafeMutableBufferPointer<UInt8>
    private let input: UnsafeBufferPointer<UInt8>
    private let file: String

    init(bytes: [UInt8], file: String) throws(YAMLError) {
        // The parser starts before any stored property is set: a class whose initializer throws
        // once it is fully initialized runs `deinit`, which would free the parser a second time.
        let parser = UnsafeMutablePointer<yaml_parser_t>.allocate(capacity: 1)
        guard yaml_parser_initialize(parser) != 0 else {
            parser.deallocate()
            throw YAMLError(location: SourceLocation(file: file, line: 1, column: 1),
                            message: "could not start the YAML parser (out of memory)")
        }
        self.parser = parser
        self.file = file
        buffer = .allocate(capacity: max(bytes.count, 1))
        _ = buffer.initialize(from: bytes)
        input = UnsafeBufferPointer(rebasing: buffer[..<bytes.count])
        yaml_parser_set_input_string(parser, buffer.baseAddress, bytes.count)
    }

    deinit {
        yaml_parser_delete(parser)
        parser.deallocate()
        buffer.deallocate()
    }

    func location(_ mark: YAMLMark) -> SourceLocation {
        SourceLocation(file: file, line: mark.line + 1, column: mark.column + 1)
    }

    func next() throws(YAMLError) -> (YAMLEvent, YAMLMark) {
        var event = yaml_event_t()
        guard yaml_parser_parse(parser, &event) != 0 else { throw parserError() }
        defer { yaml_event_delete(&event) }
        let mark = YAMLMark(line: Int(event.start_mark.line), column: Int(event.start_mark.column))
        switch event.type {
        case YAML_STREAM_START_EVENT:
            return (.streamStart, mark)
        case YAML_STREAM_END_EVENT:
            return (.streamEnd, mark)
        case YAML_DOCUMENT_START_EVENT:
            return (.documentStart, mark)
        case YAML_DOCUMENT_END_EVENT:
            return (.documentEnd, mark)
        case YAML_MAPPING_START_EVENT:
            let data = event.data.mapping_start
            return (.mappingStart(anchor: string(data.anchor), tag: string(data.tag)), mark)
        case YAML_MAPPING_END_EVENT:
            return (.mappingEnd, mark)
        case YAML_SEQUENCE_START_EVENT:
            let data = event.data.sequence_start
            return (.sequenceStart(anchor: string(data.anchor), tag: string(data.tag)), mark)
        case YAML_SEQUENCE_END_EVENT:
            return (.sequenceEnd, mark)
        case YAML_SCALAR_EVENT:
            let data = event.data.scalar
            let value = data.value.map {
                String(decoding: UnsafeBufferPointer(start: $0, count: Int(data.length)), as: UTF8.self)
            } ?? ""
            return (.scalar(value: value, anchor: string(data.anchor), tag: string(data.tag),
                            isQuoted: data.style != YAML_PLAIN_SCALAR_STYLE), mark)
        case YAML_ALIAS_EVENT:
            return (.alias(anchor: string(event.data.alias.anchor) ?? ""), mark)
        default:
            throw YAMLError(location: location(mark), message: "unexpected YAML event")
        }
    }

    private func string(_ pointer: UnsafeMutablePointer<yaml_char_t>?) -> String? {
        pointer.map { String(cString: UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self)) }
    }

    private func parserError() -> YAMLError {
        let state = parser.pointee
        let problem = state.problem.map { String(cString: $0) } ?? "invalid YAML"
        if state.error == YAML_READER_ERROR {
            // The reader reports a byte offset, not a mark: count lines up to it.
            let offset = min(Int(state.problem_offset), input.count)
            var line = 1, column = 1
            for byte in input[..<offset] {
                if byte == UInt8(ascii: "\n") { line += 1; column = 1 } else if byte & 0xC0 != 0x80 { column += 1 }
            }
            return YAMLError(location: SourceLocation(file: file, line: line, column: column),
                             message: "\(problem) (the file must be UTF-8 text)")
        }
        let mark = YAMLMark(line: Int(state.problem_mark.line), column: Int(state.problem_mark.column))
        let context = state.context.map { String(cString: $0) }
        if context == "while scanning an alias" {
            // A bare `*` (the wildcard the manifests use) reads as an alias with no name.
            let contextMark = YAMLMark(line: Int(state.context_mark.line), column: Int(state.context_mark.column))
            return YAMLError(location: location(contextMark),
                             message: "a bare * starts an alias in YAML, so it cannot be a plain value",
                             hint: "quote it: \"*\" (or write [\"*\"] in a list)")
        }
        var message = problem
        if let context {
            let contextMark = YAMLMark(line: Int(state.context_mark.line), column: Int(state.context_mark.column))
            message += " \(context) started at line \(contextMark.line + 1), column \(contextMark.column + 1)"
        }
        if lineStartsWithTab(mark.line) {
            message += "; tabs cannot indent YAML, use spaces"
        }
        return YAMLError(location: location(mark), message: message)
    }

    /// Whether a line's indentation holds a tab, the usual cause of a scanner error on it.
    private func lineStartsWithTab(_ line: Int) -> Bool {
        var position = 0
        var remaining = line
        while remaining > 0, position < input.count {
            if input[position] == UInt8(ascii: "\n") { remaining -= 1 }
            position += 1
        }
        while position < input.count, input[position] == UInt8(ascii: " ") { position += 1 }
        return position < input.count && input[position] == UInt8(ascii: "\t")
    }
}
