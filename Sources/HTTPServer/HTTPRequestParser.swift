import Foundation
import HTTPCore

/// Turns the bytes of one connection into requests, whichever way they arrive: bytes are appended
/// as they come, and `next()` says whether a whole request is there yet. Both the blocking reader
/// and the event loop use it, so a request is framed the same way by both. It resumes where it
/// stopped, so a large body arriving in small pieces is scanned once.
struct HTTPRequestParser {
    enum Step {
        case request(HTTPServerRequest, keepAlive: Bool)
        /// More bytes are needed; `sendContinue` asks for `100 Continue` (once per request).
        case needMore(sendContinue: Bool)
        /// The request cannot be served; answer with this status and close.
        case refused(status: Int, message: String)
        /// The stream cannot be read further (a framing line that never ends); close without an answer.
        case unreadable
    }

    let maxHeaderSize: Int
    let maxBodySize: Int
    private var buffer: [UInt8] = []
    private var position = 0
    private var state = State.head(scannedTo: 0)
    private var continueOwed = false

    private enum State {
        /// Looking for the end of the head; bytes before `scannedTo` hold no `\r\n\r\n`.
        case head(scannedTo: Int)
        case body(Pending, length: Int)
        case chunked(Pending, Chunked)
    }

    private struct Pending {
        var request: HTTPServerRequest
        var keepAlive: Bool
    }

    private struct Chunked {
        var body = Data()
        /// Where the body's framing started, so chunk lines and trailers are bounded too.
        var start: Int
        var phase = Phase.size

        enum Phase {
            case size
            case data(remaining: Int)
            case trailers
        }
    }

    init(maxHeaderSize: Int, maxBodySize: Int) {
        self.maxHeaderSize = maxHeaderSize
        self.maxBodySize = maxBodySize
    }

    /// Bytes received and not yet part of a returned request.
    var bufferedCount: Int { buffer.count - position }

    /// Still reading a request line or headers (or waiting for the next request).
    var isReadingHead: Bool {
        if case .head = state { return true }
        return false
    }

    /// True once a byte of a request (other than the empty lines allowed between requests) arrived.
    var isInsideRequest: Bool {
        if case .head = state { return buffer[position...].contains { $0 != 13 && $0 != 10 } }
        return true
    }

    mutating func append(_ bytes: UnsafeRawBufferPointer) {
        buffer.append(contentsOf: bytes)
    }

    mutating func next() -> Step {
        while true {
            switch state {
            case .head(let scannedTo):
                // A client may send empty lines between requests; they are dropped at once, so a
                // stream of them cannot grow the buffer.
                while position + 1 < buffer.count, buffer[position] == 13, buffer[position + 1] == 10 { position += 2 }
                compact()
                guard let end = find(headEnd, from: max(scannedTo - position, 0)) else {
                    if bufferedCount > maxHeaderSize {
                        return .refused(status: 431, message: "The request headers are larger than \(maxHeaderSize) bytes.")
                    }
                    state = .head(scannedTo: max(buffer.count - 3, position))
                    return .needMore(sendContinue: false)
                }
                if end - position > maxHeaderSize {
                    return .refused(status: 431, message: "The request headers are larger than \(maxHeaderSize) bytes.")
                }
                let headBytes = buffer[position..<end]
                position = end + 4
                if let refusal = parseHead(headBytes) { return refusal }
            case .body(let pending, let length):
                guard bufferedCount >= length else { return .needMore(sendContinue: takeContinue()) }
                var request = pending.request
                request.body = Data(buffer[position..<position + length])
                position += length
                return finish(request, keepAlive: pending.keepAlive)
            case .chunked(let pending, var chunked):
                switch advance(&chunked) {
                case .some(let step):
                    state = .chunked(pending, chunked)
                    if case .needMore = step { return .needMore(sendContinue: takeContinue()) }
                    return step
                case .none:
                    var request = pending.request
                    request.body = chunked.body
                    return finish(request, keepAlive: pending.keepAlive)
                }
            }
        }
    }

    private mutating func finish(_ request: HTTPServerRequest, keepAlive: Bool) -> Step {
        state = .head(scannedTo: 0)
        continueOwed = false
        compact()
        return .request(request, keepAlive: keepAlive)
    }

    private mutating func takeContinue() -> Bool {
        defer { continueOwed = false }
        return continueOwed
    }

    /// Drops consumed bytes once they are a good part of the buffer, so appends stay cheap.
    private mutating func compact() {
        if position > 0 && (position == buffer.count || position >= 4096) {
            buffer.removeFirst(position)
            if case .head(let scannedTo) = state { state = .head(scannedTo: max(scannedTo - position, 0)) }
            position = 0
        }
    }

    private static let httpOnePrefix = Array("HTTP/1.".utf8)
    private let headEnd: [UInt8] = [13, 10, 13, 10]
    private let lineEnd: [UInt8] = [13, 10]

    /// The index where `pattern` starts, searching from `position + offset`.
    private func find(_ pattern: [UInt8], from offset: Int) -> Int? {
        var index = position + offset
        let last = buffer.count - pattern.count
        while index <= last {
            if buffer[index] == pattern[0] {
                var matched = 1
                while matched < pattern.count && buffer[index + matched] == pattern[matched] { matched += 1 }
                if matched == pattern.count { return index }
            }
            index += 1
        }
        return nil
    }

    /// Reads a request's head and moves to its body; a step to return when the head is refused.
    private mutating func parseHead(_ head: ArraySlice<UInt8>) -> Step? {
        var lines: [ArraySlice<UInt8>] = []
        var lineStart = head.startIndex
        var index = head.startIndex
        while index < head.endIndex {
            if head[index] == 13 && index + 1 < head.endIndex && head[index + 1] == 10 {
                lines.append(head[lineStart..<index])
                index += 2
                lineStart = index
            } else {
                index += 1
            }
        }
        lines.append(head[lineStart..<head.endIndex])
        let requestLine = lines.removeFirst().split(separator: 32, omittingEmptySubsequences: true)
        guard requestLine.count == 3, requestLine[2].starts(with: Self.httpOnePrefix) else {
            return .refused(status: 400, message: "The request line is not HTTP/1.x.")
        }
        var headers: [(name: String, value: String)] = []
        for line in lines {
            if let first = line.first, first == 32 || first == 9, !headers.isEmpty {
                headers[headers.count - 1].value += " " + Self.trimmed(line)
                continue
            }
            guard let colon = line.firstIndex(of: 58), colon != line.startIndex,
                  !line[..<colon].contains(where: { $0 == 32 || $0 == 9 }) else {
                return .refused(status: 400, message: "A request header line is malformed.")
            }
            headers.append((String(decoding: line[..<colon], as: UTF8.self), Self.trimmed(line[(colon + 1)...])))
        }
        let request = HTTPServerRequest(method: String(decoding: requestLine[0], as: UTF8.self),
                                        target: String(decoding: requestLine[1], as: UTF8.self), headers: headers)
        let connectionHeader = request.header("Connection")?.lowercased() ?? ""
        let isHTTP11 = requestLine[2].elementsEqual("HTTP/1.1".utf8)
        let pending = Pending(request: request,
                              keepAlive: isHTTP11 ? !connectionHeader.contains("close") : connectionHeader.contains("keep-alive"))
        let expectsContinue = request.header("Expect")?.lowercased() == "100-continue"

        if let encoding = request.header("Transfer-Encoding")?.lowercased() {
            guard encoding.hasSuffix("chunked") else {
                return .refused(status: 501, message: "Transfer-Encoding '\(encoding)' is not supported.")
            }
            continueOwed = expectsContinue && position == buffer.count
            state = .chunked(pending, Chunked(start: position))
            return nil
        }
        // RFC 9112 §6.3: several Content-Length values (in one field or repeated) that differ make
        // the message's end ambiguous, which is how requests get smuggled past a proxy.
        var lengths: [String] = []
        for header in headers where HeaderName.matches(header.name, "Content-Length") {
            // One value without a comma is the usual case: no split, no array of pieces.
            if !header.value.utf8.contains(44) {
                lengths.append(Self.trimmed(header.value.utf8))
                continue
            }
            lengths += header.value.split(separator: ",", omittingEmptySubsequences: false).map { Self.trimmed($0.utf8) }
        }
        guard let lengthText = lengths.first else {
            state = .body(pending, length: 0)
            return nil
        }
        guard lengths.allSatisfy({ $0 == lengthText }) else {
            return .refused(status: 400, message: "The request has conflicting Content-Length headers.")
        }
        guard lengthText.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }), let length = Int(lengthText) else {
            return .refused(status: 400, message: "Content-Length '\(lengthText.prefix(32))' is not a number of bytes.")
        }
        guard length <= maxBodySize else {
            return .refused(status: 413, message: "The request body is larger than \(maxBodySize) bytes.")
        }
        continueOwed = expectsContinue && length > 0 && position == buffer.count
        state = .body(pending, length: length)
        return nil
    }

    /// Moves through a chunked body; nil when it is complete, otherwise what to return.
    private mutating func advance(_ chunked: inout Chunked) -> Step? {
        while true {
            // Chunk lines and trailers are not body, so the body limit does not bound them: without a
            // limit of their own, one-byte chunks with long extensions or endless trailer lines would
            // grow the buffer without end.
            if position - chunked.start - chunked.body.count > maxBodySize {
                return .refused(status: 413, message: "The chunk lines and trailers are larger than \(maxBodySize) bytes.")
            }
            switch chunked.phase {
            case .size, .trailers:
                guard let end = find(lineEnd, from: 0) else {
                    return bufferedCount > 4096 ? .unreadable : .needMore(sendContinue: false)
                }
                let line = buffer[position..<end]
                position = end + 2
                if case .trailers = chunked.phase {
                    // Trailer fields are read and ignored, up to the empty line that ends the message.
                    if line.isEmpty { return nil }
                    continue
                }
                let sizeText = Self.trimmed(line.split(separator: 59, maxSplits: 1, omittingEmptySubsequences: false).first ?? [])
                guard let size = Int(sizeText, radix: 16), size >= 0 else {
                    return .refused(status: 400, message: "A chunk size is malformed.")
                }
                if size == 0 {
                    chunked.phase = .trailers
                    continue
                }
                // Compared by subtraction: a chunk size near Int.max must not overflow the sum.
                guard size <= maxBodySize - chunked.body.count else {
                    return .refused(status: 413, message: "The request body is larger than \(maxBodySize) bytes.")
                }
                chunked.phase = .data(remaining: size + 2)
            case .data(let remaining):
                guard bufferedCount >= remaining else { return .needMore(sendContinue: false) }
                chunked.body.append(contentsOf: buffer[position..<position + remaining - 2])
                position += remaining
                chunked.phase = .size
            }
        }
    }

    private static func trimmed<Bytes: BidirectionalCollection>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        var start = bytes.startIndex
        var end = bytes.endIndex
        while start < end && (bytes[start] == 32 || bytes[start] == 9) { start = bytes.index(after: start) }
        while end > start && (bytes[bytes.index(before: end)] == 32 || bytes[bytes.index(before: end)] == 9) { end = bytes.index(before: end) }
        return String(decoding: bytes[start..<end], as: UTF8.self)
    }
}
