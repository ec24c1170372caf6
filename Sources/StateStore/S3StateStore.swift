public import Foundation
public import HTTPCore
public import StateLocations
import Crypto
import HTTPClient

/// How to reach an S3-compatible store, from the standard AWS variables; its credentials come from a
/// provider, asked at each request.
public struct S3Configuration: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// Where requests take their credentials from, at the time each is sent.
    public var credentials: AWSCredentialsProvider
    public var region: String
    /// A non-AWS endpoint (MinIO, R2, Ceph, GCS interoperability, moto); nil: AWS S3 itself.
    public var endpoint: URL?

    public init(credentials: AWSCredentialsProvider, region: String, endpoint: URL? = nil) {
        self.credentials = credentials
        self.region = region
        self.endpoint = endpoint
    }

    /// Fixed keys (and a session token), as a test or an embedding program has them.
    public init(accessKeyId: String, secretAccessKey: String, sessionToken: String? = nil, region: String, endpoint: URL? = nil) {
        self.init(credentials: AWSCredentialsProvider(AWSCredentials(accessKeyId: accessKeyId, secretAccessKey: secretAccessKey,
                                                                     sessionToken: sessionToken)),
                  region: region, endpoint: endpoint)
    }

    public var description: String {
        "S3 (\(endpoint?.absoluteString ?? "AWS"), region \(region), credentials <redacted>)"
    }

    public var debugDescription: String { description }

    public var customMirror: Mirror {
        Mirror(self, children: ["region": region, "endpoint": endpoint?.absoluteString ?? "AWS"], displayStyle: .struct)
    }

    /// Reads `AWS_REGION` (or `AWS_DEFAULT_REGION`, else the shared config file's profile's `region`,
    /// default us-east-1) and `AWS_ENDPOINT_URL_S3` (or `AWS_ENDPOINT_URL`); credentials come from the
    /// standard chain (`AWSCredentialsProvider.standard`), asked at the first request. `transport`
    /// (default: a libcurl client with `environment`'s proxies) reaches STS, the container endpoint
    /// and the instance metadata service.
    public static func fromEnvironment(_ environment: [String: String], store: String,
                                       transport: (any HTTPTransport)? = nil) throws(StateStoreError) -> S3Configuration {
        let variables = AWSVariables(environment)
        let region = variables.first("AWS_REGION", "AWS_DEFAULT_REGION") ?? SharedConfigFiles(variables: variables).settings()?["region"] ?? "us-east-1"
        guard region.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" }) else {
            throw StateStoreError(.configuration, store: store, "AWS_REGION '\(region)' is not a region name (like eu-west-1)")
        }
        var endpoint: URL?
        if let text = variables.first("AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL") {
            guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), let host = url.host, !host.isEmpty,
                  scheme == "https" || scheme == "http", url.query == nil else {
                throw StateStoreError(.configuration, store: store, "AWS_ENDPOINT_URL_S3 '\(text)' is not an http(s) URL like https://s3.example.com")
            }
            if scheme == "http", !Self.isLoopback(host) {
                throw StateStoreError(.configuration, store: store, "AWS_ENDPOINT_URL_S3 '\(text)' uses plain http:// on a non-loopback host; use https://")
            }
            endpoint = url
        }
        let client = transport ?? CurlHTTPClient(configuration: .init(environment: environment))
        return S3Configuration(credentials: .standard(environment: environment, region: region, transport: client),
                               region: region, endpoint: endpoint)
    }

    static func isLoopback(_ host: String) -> Bool {
        ["localhost", "127.0.0.1", "::1", "[::1]"].contains(host.lowercased()) || host.hasPrefix("127.")
    }

    /// The object's URL: virtual-hosted on AWS (`https://bucket.s3.region.amazonaws.com/key`),
    /// path-style on any other endpoint (`endpoint/bucket/key`) and for bucket names with dots,
    /// which a virtual-hosted TLS certificate cannot cover.
    public func url(bucket: String, key: String) -> URL {
        let path = "/" + key
        if let endpoint {
            var base = endpoint.absoluteString
            while base.hasSuffix("/") { base.removeLast() }
            return URL(string: base + "/" + bucket + path)!
        }
        if bucket.contains(".") {
            return URL(string: "https://s3.\(region).amazonaws.com/\(bucket)\(path)")!
        }
        return URL(string: "https://\(bucket).s3.\(region).amazonaws.com\(path)")!
    }
}

/// A state document in an S3-compatible bucket, signed with AWS Signature V4 by libcurl.
///
/// Reads use `GET` and keep the ETag; `poll` sends `If-None-Match` and gets `304` while nothing
/// changed. Writes send `If-Match: <ETag>` or `If-None-Match: *`; `412` or `409` is a conflict.
public struct S3StateStore: StateDocumentStore, CustomStringConvertible {
    public let location: StateLocation
    public let owner: StateOwner
    public let bucket: String
    public let key: String
    public let configuration: S3Configuration
    private let s3: S3Bucket

    public init(bucket: String, key: String, owner: StateOwner, configuration: S3Configuration, transport: any HTTPTransport) {
        self.bucket = bucket
        self.key = key
        self.owner = owner
        self.configuration = configuration
        location = .s3(bucket: bucket, key: key)
        s3 = S3Bucket(bucket: bucket, configuration: configuration, transport: transport, store: location.description)
    }

    var name: String { location.description }
    /// How many replaced versions the history prefix keeps (a ring of this many objects).
    public var historyLimit = S3StateStore.defaultHistoryLimit

    public var description: String { "\(location) via \(configuration)" }

    public func read() async throws(StateStoreError) -> StateRead {
        let response = try await send(request(method: "GET"))
        return try interpretRead(response)
    }

    public func poll(since version: StateVersion) async throws(StateStoreError) -> StatePoll {
        let response = try await send(request(method: "GET", headers: [("If-None-Match", version.rawValue)]))
        if response.status == 304 { return .unchanged }
        let read = try interpretRead(response)
        return read.version == version ? .unchanged : .changed(read)
    }

    public func write(_ document: StateDocument, condition: StateWriteCondition) async throws(StateStoreError) -> StateVersion {
        if let reason = owner.mismatch(with: document.owner) {
            throw StateStoreError(.wrongOwner, store: name, "refusing to write a document that is not this environment's: \(reason)")
        }
        let body: Data
        do {
            body = try document.encoded()
        } catch {
            throw StateStoreError(.io, store: name, "cannot encode the state document: \(error)")
        }
        if case .ifMatch(let version) = condition { try await keepReplaced(version) }
        var headers: [(name: String, value: String)] = [("Content-Type", "application/json")]
        switch condition {
        case .createOnly: headers.append(("If-None-Match", "*"))
        case .ifMatch(let version): headers.append(("If-Match", version.rawValue))
        }
        let response = try await send(request(method: "PUT", headers: headers, body: body))
        switch response.status {
        case 200...299:
            if let etag = response.header("ETag"), !etag.isEmpty { return StateVersion(etag) }
            // Some stores omit the ETag on PUT; a HEAD reads it back.
            let head = try await send(request(method: "HEAD"))
            guard (200...299).contains(head.status), let etag = head.header("ETag"), !etag.isEmpty else {
                throw StateStoreError(.unexpectedResponse, store: name, "the document was written, but the store reports no ETag for it (HTTP \(head.status)); conditional writes need one")
            }
            return StateVersion(etag)
        case 412, 409:
            let what = condition == .createOnly ? "created the state document" : "changed the state document since it was read"
            let winner = (try? await read().document?.writtenBy).flatMap { $0 }.map { " (\($0))" } ?? ""
            throw StateStoreError(.conflict, store: name, "another writer\(winner) \(what) first (HTTP \(response.status)); read it again and re-plan")
        case 404 where condition != .createOnly:
            let error = S3ErrorBody(response.body)
            if error.code == "NoSuchKey" {
                throw StateStoreError(.conflict, store: name, "the state document was removed since it was read; read it again and re-plan")
            }
            throw failure(response)
        case 501 where S3ErrorBody(response.body).code == "NotImplemented":
            throw StateStoreError(.unexpectedResponse, store: name, "the store does not support conditional writes (If-Match / If-None-Match on PUT): \(S3ErrorBody(response.body).summary); use a store that does (AWS S3, R2, MinIO, Ceph RGW recent versions)")
        default:
            throw failure(response)
        }
    }

    private func interpretRead(_ response: HTTPResponse) throws(StateStoreError) -> StateRead {
        switch response.status {
        case 200:
            guard let etag = response.header("ETag"), !etag.isEmpty else {
                throw StateStoreError(.unexpectedResponse, store: name, "the store sent the document without an ETag; conditional writes need one")
            }
            do {
                let (document, source) = try StateDocument.decode(response.body, expecting: owner)
                return StateRead(document: document, version: StateVersion(etag), migratedFrom: source == .legacySnapshot ? name : nil)
            } catch {
                throw StateStoreError(error, store: name)
            }
        case 404 where S3ErrorBody(response.body).code == "NoSuchKey":
            return .empty
        default:
            throw failure(response)
        }
    }

    /// Names the cause of an answer that is neither a document nor "nothing yet".
    func failure(_ response: HTTPResponse) -> StateStoreError { s3.failure(response) }

    /// A request for the document, or for `key` (a kept version) with `query` (`versions&prefix=…`).
    func request(method: String, headers: [(name: String, value: String)] = [], body: Data = Data(),
                 key: String? = nil, query: String = "") -> HTTPRequest {
        s3.request(method: method, headers: headers, body: body, key: key ?? self.key, query: query)
    }

    func send(_ request: HTTPRequest) async throws(StateStoreError) -> HTTPResponse {
        try await s3.send(request)
    }
}

/// The `<Code>` and `<Message>` of an S3 error answer; read by position, since the body is tiny and
/// fixed in shape.
struct S3ErrorBody {
    var code: String?
    var message: String?

    init(_ body: Data) {
        let text = String(decoding: body.prefix(16_384), as: UTF8.self)
        code = Self.element("Code", in: text)
        message = Self.element("Message", in: text)
    }

    var summary: String {
        [code, message].compactMap { $0 }.joined(separator: ": ")
    }

    static func element(_ name: String, in text: String) -> String? {
        guard let start = text.range(of: "<\(name)>"), let end = text.range(of: "</\(name)>", range: start.upperBound..<text.endIndex) else {
            return nil
        }
        let value = text[start.upperBound..<end.lowerBound].trimmingCharacters(in: .whitespacesAndNewlines)
        return value.isEmpty ? nil : String(value.prefix(300))
    }
}
