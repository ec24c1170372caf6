import Crypto
import Foundation
import HTTPCore

/// One S3-compatible bucket as both S3 stores speak to it (the state document's and the plain
/// objects beside it): requests signed with AWS Signature V4, sent through the transport, and
/// answers that are not what was asked for worded as errors naming `store`.
struct S3Bucket: Sendable {
    let bucket: String
    let configuration: S3Configuration
    let transport: any HTTPTransport
    /// How errors name the store: `s3://bucket/key`.
    let store: String

    /// Names the cause of an answer that is neither what was asked for nor "nothing there".
    func failure(_ response: HTTPResponse) -> StateStoreError {
        let error = S3ErrorBody(response.body)
        let detail = error.summary.isEmpty ? "HTTP \(response.status)" : "HTTP \(response.status) \(error.summary)"
        switch (response.status, error.code) {
        case (_, "InvalidAccessKeyId"), (_, "SignatureDoesNotMatch"), (_, "ExpiredToken"), (_, "InvalidToken"),
             (_, "TokenRefreshRequired"), (_, "AuthorizationHeaderMalformed"), (401, _):
            let source = configuration.credentials.sourceName.map { " from \($0)" } ?? ""
            return StateStoreError(.credentials, store: store, "the store refused the credentials\(source) (\(detail)); check them (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, or the role they come from) and AWS_REGION")
        case (403, _):
            return StateStoreError(.accessDenied, store: store, "access denied (\(detail)); the identity needs s3:GetObject to plan and s3:PutObject to apply on this key")
        case (404, "NoSuchBucket"):
            return StateStoreError(.noSuchBucket, store: store, "the bucket '\(bucket)' does not exist (\(detail)); create it, or fix the location")
        case (301, _), (307, _), (400, "PermanentRedirect"):
            let region = response.header("x-amz-bucket-region").map { " (the bucket is in \($0); set AWS_REGION=\($0))" } ?? ""
            return StateStoreError(.configuration, store: store, "the store redirected the request\(region): \(detail)")
        case (500...599, _):
            return StateStoreError(.serverError, store: store, "the store failed (\(detail)); nothing was taken as empty, try again later")
        default:
            return StateStoreError(.unexpectedResponse, store: store, "unexpected answer \(detail)")
        }
    }

    /// A request for `key` in the bucket (the bucket itself when empty), with `query`; `send` signs it.
    func request(method: String, headers: [(name: String, value: String)] = [], body: Data = Data(),
                 key: String, query: String = "") -> HTTPRequest {
        var all = headers
        // S3 requires the payload's hash; libcurl signs this header with the others.
        all.append(("x-amz-content-sha256", Digest.sha256Hex(Array(body))))
        var url = configuration.url(bucket: bucket, key: key)
        if !query.isEmpty { url = URL(string: url.absoluteString + "?" + query) ?? url }
        return HTTPRequest(method: method, url: url, headers: all, body: body)
    }

    /// `request` signed with `credentials` (AWS Signature V4 by libcurl, and the session token of
    /// temporary credentials as `x-amz-security-token`).
    func signed(_ request: HTTPRequest, with credentials: AWSCredentials) -> HTTPRequest {
        var signed = request
        signed.headers.removeAll { $0.name.lowercased() == "x-amz-security-token" }
        if let token = credentials.sessionToken { signed.headers.append(("x-amz-security-token", token)) }
        signed.awsSigV4 = AWSSigV4Signing(region: configuration.region, service: "s3", accessKeyId: credentials.accessKeyId,
                                          secretAccessKey: credentials.secretAccessKey)
        return signed
    }

    /// Sends `request` signed with the credentials current now: each request takes them once, so a
    /// refresh meanwhile never changes a request in flight.
    func send(_ request: HTTPRequest) async throws(StateStoreError) -> HTTPResponse {
        let credentials: AWSCredentials
        do {
            credentials = try await configuration.credentials.credentials()
        } catch {
            throw StateStoreError(.credentials, store: store, error.description)
        }
        do {
            return try await transport.send(signed(request, with: credentials))
        } catch {
            throw unreachable(request, error)
        }
    }

    /// `send`, blocking the calling thread (see `HTTPTransport.sendWaiting`).
    @available(*, noasync, message: "blocks the calling thread; from async code, await send(_:)")
    func sendWaiting(_ request: HTTPRequest) throws(StateStoreError) -> HTTPResponse {
        let credentials: AWSCredentials
        switch configuration.credentials.credentialsWaiting() {
        case .success(let current): credentials = current
        case .failure(let error): throw StateStoreError(.credentials, store: store, error.description)
        }
        switch transport.sendWaiting(signed(request, with: credentials)) {
        case .success(let response): return response
        case .failure(let error): throw unreachable(request, error)
        }
    }

    private func unreachable(_ request: HTTPRequest, _ error: HTTPError) -> StateStoreError {
        switch error.kind {
        case .connectTimeout, .timeout, .couldNotConnect, .connectionDropped, .tls:
            StateStoreError(.unreachable, store: store, "cannot reach \(request.url.host ?? "the store") (\(error.message)); nothing was taken as empty")
        case .invalidRequest, .other:
            StateStoreError(.unreachable, store: store, "the request failed (\(error.message))")
        }
    }
}
