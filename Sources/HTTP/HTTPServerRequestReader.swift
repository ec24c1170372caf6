import Foundation
import Glibc

/// Reads requests one after another from a connection's byte stream.
struct RequestReader {
    enum Outcome {
        case request(HTTPServerRequest, keepAlive: Bool)
        /// The request cannot be served; answer with this status and close.
        case refused(status: Int, message: String)
        case closed
    }

    let io: ConnectionIO
    let maxHeaderSize: Int
    let maxBodySize: Int
    /// Seconds a connection may wait between requests with nothing arriving.
    let idleTimeout: Double
    /// Seconds from a request's first byte to its last.
    let requestTimeout: Double
    private var buffer: [UInt8] = []
    private var position = 0
    /// When the request being read must be complete; nil while waiting for the next one.
    private var deadline: ContinuousClock.Instant?
    private var chunk = [UInt8](repeating: 0, count: 16 * 1024)
    /// The receive timeout last set on the socket, so it is set again only when it changes.
    private var receiveTimeout: Double = -1

    /// Called when the first byte of a request arrives, so a drain lets the request finish.
    private let requestStarted: () -> Void

    init(io: ConnectionIO, configuration: HTTPServerConfiguration, requestStarted: @escaping () -> Void = {}) {
        self.io = io
        self.requestStarted = requestStarted
        maxHeaderSize = configuration.maxHeaderSize
        maxBodySize = configuration.maxBodySize
        idleTimeout = configuration.idleTimeout
        requestTimeout = configuration.requestTimeout
    }

    mutating func next() -> Outcome {
        if position > 0 {
            buffer.removeFirst(position)
            position = 0
        }
        deadline = buffer.isEmpty ? nil : .now + .seconds(requestTimeout)
        if deadline != nil { requestStarted() }
        // A client may send empty lines between requests.
        while true {
            if position + 1 < buffer.count, buffer[position] == 13, buffer[position + 1] == 10 {
                position += 2
            } else if position == buffer.count || position + 1 == buffer.count && buffer[position] == 13 {
                // Skipped lines are dropped at once, so a stream of empty lines cannot grow the buffer.
                buffer.removeFirst(position)
                position = 0
                guard fill() else { return .closed }
            } else {
                break
            }
        }
        guard let headEnd = find([13, 10, 13, 10], limit: maxHeaderSize) else {
            return buffer.count - position > maxHeaderSize
                ? .refused(status: 431, message: "The request headers are larger than \(maxHeaderSize) bytes.")
                : .closed
        }
        let head = String(decoding: buffer[position..<headEnd], as: UTF8.self)
        position = headEnd + 4
        var lines = head.components(separatedBy: "\r\n")
        let requestLine = lines.removeFirst().split(separator: " ", omittingEmptySubsequences: true)
        guard requestLine.count == 3, requestLine[2].hasPrefix("HTTP/1.") else {
            return .refused(status: 400, message: "The request line is not HTTP/1.x.")
        }
        var headers: [(name: String, value: String)] = []
        for line in lines {
            if let first = line.first, first == " " || first == "\t", !headers.isEmpty {
                headers[headers.count - 1].value += " " + line.trimmingCharacters(in: .whitespaces)
                continue
            }
            guard let colon = line.firstIndex(of: ":"), colon != line.startIndex,
                  !line[..<colon].contains(where: { $0 == " " || $0 == "\t" }) else {
                return .refused(status: 400, message: "A request header line is malformed.")
            }
            headers.append((String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
        }
        var request = HTTPServerRequest(method: String(requestLine[0]), target: String(requestLine[1]), headers: headers)
        let connectionHeader = request.header("Connection")?.lowercased() ?? ""
        let keepAlive = requestLine[2] == "HTTP/1.1" ? !connectionHeader.contains("close") : connectionHeader.contains("keep-alive")
        let expectsContinue = request.header("Expect")?.lowercased() == "100-continue"

        if let encoding = request.header("Transfer-Encoding")?.lowercased() {
            guard encoding.hasSuffix("chunked") else {
                return .refused(status: 501, message: "Transfer-Encoding '\(encoding)' is not supported.")
            }
            if expectsContinue && position == buffer.count { sendContinue() }
            switch readChunkedBody() {
            case .success(let body): request.body = body
            case .failure(let refusal): return refusal.outcome
            }
        } else {
            // RFC 9112 §6.3: several Content-Length values (in one field or repeated) that differ
            // make the message's end ambiguous, which is how requests get smuggled past a proxy.
            let lengths = headers.filter { $0.name.caseInsensitiveCompare("Content-Length") == .orderedSame }
                .flatMap { $0.value.split(separator: ",", omittingEmptySubsequences: false) }
                .map { $0.trimmingCharacters(in: .whitespaces) }
            if let lengthText = lengths.first {
                guard Set(lengths).count == 1 else {
                    return .refused(status: 400, message: "The request has conflicting Content-Length headers.")
                }
                guard lengthText.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }), let length = Int(lengthText) else {
                    return .refused(status: 400, message: "Content-Length '\(lengthText.prefix(32))' is not a number of bytes.")
                }
                guard length <= maxBodySize else {
                    return .refused(status: 413, message: "The request body is larger than \(maxBodySize) bytes.")
                }
                if expectsContinue && length > 0 && position == buffer.count { sendContinue() }
                guard let body = read(count: length) else { return .closed }
                request.body = Data(body)
            }
        }
        return .request(request, keepAlive: keepAlive)
    }

    private struct Refusal: Error {
        var outcome: Outcome
    }

    private mutating func readChunkedBody() -> Result<Data, Refusal> {
        let start = position
        var body = Data()
        let maxBodySize = maxBodySize
        // Chunk lines and trailers are not body, so the body limit does not bound them: without a
        // limit of their own, one-byte chunks with long extensions or endless trailer lines would
        // grow the buffer without end.
        var framingTooLarge: Refusal? {
            position - start - body.count <= maxBodySize ? nil
                : Refusal(outcome: .refused(status: 413, message: "The chunk lines and trailers are larger than \(maxBodySize) bytes."))
        }
        while true {
            if let framingTooLarge { return .failure(framingTooLarge) }
            guard let lineEnd = find([13, 10], limit: 4096) else {
                return .failure(Refusal(outcome: .closed))
            }
            let sizeText = String(decoding: buffer[position..<lineEnd], as: UTF8.self)
                .split(separator: ";", maxSplits: 1).first.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
            position = lineEnd + 2
            guard let size = Int(sizeText, radix: 16), size >= 0 else {
                return .failure(Refusal(outcome: .refused(status: 400, message: "A chunk size is malformed.")))
            }
            if size == 0 {
                // Trailer fields are read and ignored, up to the empty line that ends the message.
                while true {
                    if let framingTooLarge { return .failure(framingTooLarge) }
                    guard let trailerEnd = find([13, 10], limit: 4096) else { return .failure(Refusal(outcome: .closed)) }
                    let isEmpty = trailerEnd == position
                    position = trailerEnd + 2
                    if isEmpty { return .success(body) }
                }
            }
            // Compared by subtraction: a chunk size near Int.max must not overflow the sum.
            guard size <= maxBodySize - body.count else {
                return .failure(Refusal(outcome: .refused(status: 413, message: "The request body is larger than \(maxBodySize) bytes.")))
            }
            guard let chunk = read(count: size + 2) else { return .failure(Refusal(outcome: .closed)) }
            body.append(contentsOf: chunk.dropLast(2))
        }
    }

    private func sendContinue() {
        _ = io.send(Array("HTTP/1.1 100 Continue\r\n\r\n".utf8))
    }

    /// The index where `pattern` starts, at or after `position`, reading more as needed; nil if the
    /// connection ends or more than `limit` bytes pass without it.
    private mutating func find(_ pattern: [UInt8], limit: Int) -> Int? {
        var from = position
        while true {
            if buffer.count - from >= pattern.count {
                var index = from
                while index + pattern.count <= buffer.count {
                    if buffer[index] == pattern[0] && buffer[index..<index + pattern.count].elementsEqual(pattern) {
                        return index
                    }
                    index += 1
                }
                from = buffer.count - pattern.count + 1
            }
            guard buffer.count - position <= limit, fill() else { return nil }
        }
    }

    private mutating func read(count: Int) -> ArraySlice<UInt8>? {
        while buffer.count - position < count {
            guard fill() else { return nil }
        }
        defer { position += count }
        return buffer[position..<position + count]
    }

    /// Reads what has arrived; false when the connection ended or a timeout passed.
    private mutating func fill() -> Bool {
        var wait = idleTimeout
        if let deadline {
            let remaining = deadline - .now
            guard remaining > .zero else { return false }
            let components = remaining.components
            wait = min(wait, Double(components.seconds) + Double(components.attoseconds) / 1e18)
        }
        // Setting the timeout costs a system call; a change under 50 ms does not matter.
        if abs(wait - receiveTimeout) > 0.05 {
            var timeout = timeval(seconds: wait)
            _ = setsockopt(io.descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            receiveTimeout = wait
        }
        let io = io
        let received = chunk.withUnsafeMutableBytes { io.receive(into: $0) }
        guard received > 0 else { return false }
        buffer.append(contentsOf: chunk[0..<received])
        if deadline == nil {
            deadline = .now + .seconds(requestTimeout)
            requestStarted()
        }
        return true
    }
}
