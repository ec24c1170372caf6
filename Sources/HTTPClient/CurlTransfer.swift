internal import CCurl
import Foundation
import HTTPCore

/// One request on one easy handle: sets the options, performs, and turns the outcome into values.
enum CurlTransfer {
    static func perform(_ request: HTTPRequest, on easy: CurlEasyHandle, configuration: CurlHTTPClient.Configuration,
                        cancellation: CancellationFlag) -> Result<HTTPResponse, HTTPError> {
        if cancellation.isCancelled { return .failure(cancelledError) }
        let scheme: String, method: String
        switch checked(request) {
        case .success(let checked): (scheme, method) = checked
        case .failure(let refusal): return .failure(refusal)
        }

        easy.reset()
        let handle = easy.handle
        let context = TransferContext(cancellation: cancellation)
        let sendsBody = !request.body.isEmpty || ["POST", "PUT", "PATCH"].contains(method)
        let headerList = CurlHeaderList(headerLines(for: request, sendsBody: sendsBody))
        let setup = options(for: request, scheme: scheme, headerList: headerList, on: handle, configuration: configuration)
            + methodOptions(for: request, method: method, sendsBody: sendsBody, on: handle)
        if let failed = setup.first(where: { $0 != CURLE_OK }) {
            return .failure(error(for: failed, connected: false, message: easy.message(for: failed)))
        }

        let code: CURLcode = withExtendedLifetime((headerList, context)) {
            let pointer = Unmanaged.passUnretained(context).toOpaque()
            _ = rs_curl_easy_setopt_pointer(handle, CURLOPT_WRITEDATA, pointer)
            _ = rs_curl_easy_setopt_pointer(handle, CURLOPT_HEADERDATA, pointer)
            _ = rs_curl_easy_setopt_pointer(handle, CURLOPT_XFERINFODATA, pointer)
            return curl_easy_perform(handle)
        }
        return outcome(code, on: easy, context: context)
    }

    /// The request's lowercased scheme and uppercased method, or why libcurl is not asked to send it.
    private static func checked(_ request: HTTPRequest) -> Result<(scheme: String, method: String), HTTPError> {
        guard let scheme = request.url.scheme?.lowercased(), scheme == "http" || scheme == "https" else {
            return .failure(HTTPError(.invalidRequest, "Only http and https URLs are supported, not '\(request.url.absoluteString)'."))
        }
        let method = request.method.uppercased()
        guard !method.isEmpty, method.allSatisfy({ $0.isLetter || $0 == "-" }) else {
            return .failure(HTTPError(.invalidRequest, "'\(request.method)' is not an HTTP method."))
        }
        for header in request.headers where !HeaderName.isValid(name: header.name, value: header.value) {
            // The value is left out on purpose: it may be a credential.
            return .failure(HTTPError(.invalidRequest, "The request header '\(header.name)' contains a line break or an invalid name."))
        }
        return .success((scheme, method))
    }

    /// Every option but the method's: where to, how long, through which proxy, signed how.
    private static func options(for request: HTTPRequest, scheme: String, headerList: CurlHeaderList, on handle: UnsafeMutableRawPointer,
                                configuration: CurlHTTPClient.Configuration) -> [CURLcode] {
        let connectTimeout = request.connectTimeout ?? configuration.connectTimeout
        let timeout = request.timeout ?? configuration.timeout
        let proxy = proxySettings(scheme: scheme, environment: configuration.environment)
        var setup: [CURLcode] = [
            rs_curl_easy_setopt_string(handle, CURLOPT_URL, request.url.absoluteString),
            rs_curl_easy_setopt_string(handle, CURLOPT_PROTOCOLS_STR, "http,https"),
            rs_curl_easy_setopt_string(handle, CURLOPT_REDIR_PROTOCOLS_STR, "http,https"),
            rs_curl_easy_setopt_long(handle, CURLOPT_NOSIGNAL, 1),
            // A signed request is never redirected: the signature covers one host and path only.
            rs_curl_easy_setopt_long(handle, CURLOPT_FOLLOWLOCATION, request.awsSigV4 == nil ? 1 : 0),
            rs_curl_easy_setopt_long(handle, CURLOPT_MAXREDIRS, 5),
            rs_curl_easy_setopt_long(handle, CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_2TLS)),
            rs_curl_easy_setopt_long(handle, CURLOPT_SSL_VERIFYPEER, 1),
            rs_curl_easy_setopt_long(handle, CURLOPT_SSL_VERIFYHOST, 2),
            rs_curl_easy_setopt_string(handle, CURLOPT_USERAGENT, configuration.userAgent),
            rs_curl_easy_setopt_long(handle, CURLOPT_CONNECTTIMEOUT_MS, milliseconds(connectTimeout)),
            rs_curl_easy_setopt_long(handle, CURLOPT_TIMEOUT_MS, milliseconds(timeout)),
            // An empty proxy switches off libcurl's own reading of the process environment.
            rs_curl_easy_setopt_string(handle, CURLOPT_PROXY, proxy.proxy ?? ""),
            rs_curl_easy_setopt_slist(handle, CURLOPT_HTTPHEADER, headerList.list),
            rs_curl_easy_setopt_write_callback(handle, CURLOPT_WRITEFUNCTION, writeBody),
            rs_curl_easy_setopt_write_callback(handle, CURLOPT_HEADERFUNCTION, writeHeader),
            rs_curl_easy_setopt_long(handle, CURLOPT_NOPROGRESS, 0),
            rs_curl_easy_setopt_xferinfo_callback(handle, CURLOPT_XFERINFOFUNCTION, progress),
        ]
        if let noProxy = proxy.noProxy {
            setup.append(rs_curl_easy_setopt_string(handle, CURLOPT_NOPROXY, noProxy))
        }
        if let caBundlePath = configuration.caBundlePath {
            setup.append(rs_curl_easy_setopt_string(handle, CURLOPT_CAINFO, caBundlePath))
        }
        if let signing = request.awsSigV4 {
            // libcurl computes the signature itself; "aws:amz" names the AWS4-HMAC-SHA256 scheme.
            setup.append(rs_curl_easy_setopt_string(handle, CURLOPT_AWS_SIGV4, "aws:amz:\(signing.region):\(signing.service)"))
            setup.append(rs_curl_easy_setopt_string(handle, CURLOPT_USERNAME, signing.accessKeyId))
            setup.append(rs_curl_easy_setopt_string(handle, CURLOPT_PASSWORD, signing.secretAccessKey))
            // Bodies over 1 MiB get "Expect: 100-continue"; a server that ignores it costs 200 ms, not 1 s.
            setup.append(rs_curl_easy_setopt_long(handle, CURLOPT_EXPECT_100_TIMEOUT_MS, 200))
        }
        return setup
    }

    /// The method, and the body it sends.
    private static func methodOptions(for request: HTTPRequest, method: String, sendsBody: Bool,
                                      on handle: UnsafeMutableRawPointer) -> [CURLcode] {
        if method == "GET" && !sendsBody {
            return [rs_curl_easy_setopt_long(handle, CURLOPT_HTTPGET, 1)]
        }
        if method == "HEAD" {
            return [rs_curl_easy_setopt_long(handle, CURLOPT_NOBODY, 1)]
        }
        var setup: [CURLcode] = []
        if sendsBody {
            // The size goes first so that COPYPOSTFIELDS copies exactly the body, zero bytes included.
            setup.append(rs_curl_easy_setopt_off(handle, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(request.body.count)))
            setup.append(request.body.withUnsafeBytes { bytes in
                if let base = bytes.baseAddress {
                    return rs_curl_easy_setopt_pointer(handle, CURLOPT_COPYPOSTFIELDS, UnsafeMutableRawPointer(mutating: base))
                }
                return rs_curl_easy_setopt_string(handle, CURLOPT_COPYPOSTFIELDS, "")
            })
        }
        if method != "POST" || !sendsBody {
            setup.append(rs_curl_easy_setopt_string(handle, CURLOPT_CUSTOMREQUEST, method))
        }
        return setup
    }

    /// The response a performed transfer received, or the error it ended with.
    private static func outcome(_ code: CURLcode, on easy: CurlEasyHandle, context: TransferContext) -> Result<HTTPResponse, HTTPError> {
        let handle = easy.handle
        guard code == CURLE_OK else {
            // A reused connection reports no connect time, but reaching "pretransfer" shows it was connected.
            var connectTime: curl_off_t = 0
            var pretransferTime: curl_off_t = 0
            _ = rs_curl_easy_getinfo_off(handle, CURLINFO_CONNECT_TIME_T, &connectTime)
            _ = rs_curl_easy_getinfo_off(handle, CURLINFO_PRETRANSFER_TIME_T, &pretransferTime)
            return .failure(error(for: code, connected: connectTime > 0 || pretransferTime > 0,
                                  message: easy.message(for: code)))
        }
        var status = 0
        _ = rs_curl_easy_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &status)
        return .success(HTTPResponse(status: status, headers: context.headers, body: context.body))
    }

    static let cancelledError = HTTPError(.other, "The request was cancelled.")

    static func headerLines(for request: HTTPRequest, sendsBody: Bool) -> [String] {
        var lines = request.headers.map { header in
            // "Name;" is libcurl's spelling for a header sent with an empty value.
            header.value.isEmpty ? "\(header.name);" : "\(header.name): \(header.value)"
        }
        // libcurl's SigV4 signer (7.88) also signs these header removals as empty headers, which
        // no server sees; a signed request names its Content-Type and lets libcurl decide on Expect.
        guard request.awsSigV4 == nil else { return lines }
        // An empty Expect stops libcurl from waiting for "100 Continue" before sending a body.
        if request.header("Expect") == nil { lines.append("Expect:") }
        // libcurl would otherwise label every body as a form submission.
        if sendsBody && request.header("Content-Type") == nil { lines.append("Content-Type:") }
        return lines
    }

    /// Proxy settings from the environment. Uppercase `HTTP_PROXY` is ignored, as libcurl does,
    /// because CGI servers put a client-controlled `Proxy:` header there.
    static func proxySettings(scheme: String, environment: [String: String]) -> (proxy: String?, noProxy: String?) {
        func first(_ names: String...) -> String? {
            names.lazy.compactMap { environment[$0] }.first { !$0.isEmpty }
        }
        let proxy = scheme == "https"
            ? first("https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY")
            : first("http_proxy", "all_proxy", "ALL_PROXY")
        return (proxy, first("no_proxy", "NO_PROXY"))
    }

    static func error(for code: CURLcode, connected: Bool, message: String) -> HTTPError {
        switch code {
        case CURLE_OPERATION_TIMEDOUT:
            HTTPError(connected ? .timeout : .connectTimeout, message)
        case CURLE_COULDNT_CONNECT, CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY:
            HTTPError(.couldNotConnect, message)
        case CURLE_GOT_NOTHING, CURLE_RECV_ERROR, CURLE_SEND_ERROR, CURLE_PARTIAL_FILE, CURLE_HTTP2,
             CURLE_HTTP2_STREAM:
            HTTPError(.connectionDropped, message)
        case CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CERTPROBLEM, CURLE_SSL_CIPHER,
             CURLE_SSL_CACERT_BADFILE, CURLE_SSL_ENGINE_NOTFOUND, CURLE_SSL_ENGINE_SETFAILED,
             CURLE_SSL_ENGINE_INITFAILED, CURLE_SSL_SHUTDOWN_FAILED, CURLE_SSL_CRL_BADFILE, CURLE_SSL_ISSUER_ERROR,
             CURLE_SSL_PINNEDPUBKEYNOTMATCH, CURLE_SSL_INVALIDCERTSTATUS, CURLE_SSL_CLIENTCERT, CURLE_USE_SSL_FAILED:
            HTTPError(.tls, message)
        case CURLE_URL_MALFORMAT, CURLE_UNSUPPORTED_PROTOCOL, CURLE_BAD_FUNCTION_ARGUMENT:
            HTTPError(.invalidRequest, message)
        case CURLE_ABORTED_BY_CALLBACK:
            cancelledError
        default:
            HTTPError(.other, message)
        }
    }

    private static func milliseconds(_ seconds: Double) -> Int {
        seconds.isFinite && seconds > 0 ? max(1, Int((seconds * 1000).rounded())) : 0
    }
}

/// What the callbacks collect during one transfer; libcurl hands it back as an opaque pointer.
final class TransferContext {
    let cancellation: CancellationFlag
    var body = Data()
    var headers: [(name: String, value: String)] = []

    init(cancellation: CancellationFlag) {
        self.cancellation = cancellation
    }

    /// libcurl reports every response it sees (redirects, `100 Continue`); a status line starts a new
    /// one, so only the final response's headers remain.
    func receiveHeaderLine(_ line: String) {
        let trimmed = line.trimmingCharacters(in: CharacterSet(charactersIn: "\r\n"))
        if trimmed.hasPrefix("HTTP/") {
            headers.removeAll()
        } else if let first = trimmed.first, first == " " || first == "\t", !headers.isEmpty {
            headers[headers.count - 1].value += " " + trimmed.trimmingCharacters(in: .whitespaces)
        } else if let colon = trimmed.firstIndex(of: ":") {
            let name = String(trimmed[..<colon]).trimmingCharacters(in: .whitespaces)
            let value = String(trimmed[trimmed.index(after: colon)...]).trimmingCharacters(in: .whitespaces)
            headers.append((name, value))
        }
    }
}

private func context(_ userdata: UnsafeMutableRawPointer?) -> TransferContext? {
    userdata.map { Unmanaged<TransferContext>.fromOpaque($0).takeUnretainedValue() }
}

private let writeBody: rs_curl_write_callback = { pointer, size, count, userdata in
    let length = size * count
    guard let context = context(userdata) else { return 0 }
    if let pointer, length > 0 {
        pointer.withMemoryRebound(to: UInt8.self, capacity: length) { context.body.append($0, count: length) }
    }
    return length
}

private let writeHeader: rs_curl_write_callback = { pointer, size, count, userdata in
    let length = size * count
    guard let context = context(userdata) else { return 0 }
    if let pointer, length > 0 {
        let line = pointer.withMemoryRebound(to: UInt8.self, capacity: length) {
            String(decoding: UnsafeBufferPointer(start: $0, count: length), as: UTF8.self)
        }
        context.receiveHeaderLine(line)
    }
    return length
}

private let progress: rs_curl_xferinfo_callback = { userdata, _, _, _, _ in
    context(userdata)?.cancellation.isCancelled == true ? 1 : 0
}
