public import Foundation
import HTTPCore
public import HTTPServer

/// STS on loopback for the web identity tests: takes `AssumeRoleWithWebIdentity` as the tool sends
/// it (unsigned, the token in the form), records the token, and passes the form on to moto signed
/// (moto checks every request's signature; AWS's STS does not check this call's). The credentials
/// in the answer are moto's own, so S3 requests signed with them pass moto's checks.
public final class STSGateway: Sendable {
    public let server: HTTPServer
    private let received = Locked<[[String: String]]>()

    public init(moto: MotoServer) throws {
        let received = received
        server = try HTTPServer { request in
            received.append(Self.form(request.body))
            do {
                return try await moto.forwardSTS(request.body)
            } catch {
                return HTTPResponse(status: 502, body: Data("\(error)".utf8))
            }
        }
    }

    public var url: URL { server.baseURL }
    /// Every call's form fields, in order (`Action`, `RoleArn`, `RoleSessionName`, `WebIdentityToken`).
    public var calls: [[String: String]] { received.value }

    public func stop() { server.stop() }

    static func form(_ body: Data) -> [String: String] {
        var fields: [String: String] = [:]
        for pair in String(decoding: body, as: UTF8.self).split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1).map { String($0).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String($0) }
            fields[parts[0]] = parts.count > 1 ? parts[1] : ""
        }
        return fields
    }
}

/// A credential endpoint on loopback: ECS's and EKS Pod Identity's container endpoint, or the EC2
/// instance metadata service (IMDSv2: a session token first, then the role's name and credentials).
/// Answers from a list the test gives, one per credential request (the last one repeats), and
/// records every request.
public final class CredentialEndpoint: Sendable {
    public enum Kind: Sendable {
        /// The container endpoint; requests must carry `Authorization: <authorization>` when set.
        case container(authorization: String?)
        case instanceMetadata
    }

    public enum Answer: Sendable {
        /// `identity`'s keys and token, said to expire `expiresIn` seconds from now.
        case credentials(MotoServer.Identity, expiresIn: Double)
        case status(Int)
    }

    public struct Call: Sendable {
        public var method: String
        public var path: String
        public var authorization: String?
    }

    public static let roleName = "retention-sync-node"
    static let sessionToken = "imds-session-token-1"

    public let server: HTTPServer
    private let answers: Locked<[Answer]>
    private let expectedAuthorization: Locked<String?>
    private let recorded = Locked<[Call]>()

    public init(_ kind: Kind, answers: [Answer]) throws {
        let answers = Locked(answers), recorded = recorded
        var authorization: String?
        if case .container(let token) = kind { authorization = token }
        let expected = Locked(authorization)
        self.answers = answers
        expectedAuthorization = expected
        server = try HTTPServer { request in
            recorded.append(Call(method: request.method, path: request.path, authorization: request.header("Authorization")))
            switch kind {
            case .container:
                if let token = expected.value, request.header("Authorization") != token { return HTTPResponse(status: 401) }
                return Self.next(answers)
            case .instanceMetadata:
                return Self.instanceMetadata(request, answers)
            }
        }
    }

    public var url: URL { server.baseURL }
    public var calls: [Call] { recorded.value }
    /// How many times credentials were asked for (not counting IMDSv2's session token and role name).
    public var credentialCalls: Int {
        calls.filter { $0.path != "/latest/api/token" && $0.path != "/latest/meta-data/iam/security-credentials/" }.count
    }

    /// Replaces the answers to come.
    public func answer(_ next: [Answer]) { answers.set(next) }

    /// The `Authorization` value the container endpoint expects from now on.
    public func expect(authorization: String?) { expectedAuthorization.set(authorization) }

    public func stop() { server.stop() }

    private static func instanceMetadata(_ request: HTTPServerRequest, _ answers: Locked<[Answer]>) -> HTTPResponse {
        if request.path == "/latest/api/token" {
            guard request.method == "PUT", request.header("X-aws-ec2-metadata-token-ttl-seconds") != nil else { return HTTPResponse(status: 400) }
            return HTTPResponse(status: 200, body: Data(sessionToken.utf8))
        }
        guard request.method == "GET", request.header("X-aws-ec2-metadata-token") == sessionToken else { return HTTPResponse(status: 401) }
        switch request.path {
        case "/latest/meta-data/iam/security-credentials/": return HTTPResponse(status: 200, body: Data((roleName + "\n").utf8))
        case "/latest/meta-data/iam/security-credentials/" + roleName: return next(answers)
        default: return HTTPResponse(status: 404)
        }
    }

    private static func next(_ answers: Locked<[Answer]>) -> HTTPResponse {
        let answer = answers.withLock { list -> Answer? in list.count > 1 ? list.removeFirst() : list.first }
        switch answer {
        case nil: return HTTPResponse(status: 404)
        case .status(let status)?: return HTTPResponse(status: status)
        case .credentials(let identity, let expiresIn)?:
            let formatter = ISO8601DateFormatter()
            var object: [String: Any] = ["Code": "Success", "Type": "AWS-HMAC", "AccessKeyId": identity.accessKeyId,
                                         "SecretAccessKey": identity.secretAccessKey,
                                         "Expiration": formatter.string(from: Date().addingTimeInterval(expiresIn))]
            if let token = identity.sessionToken { object["Token"] = token }
            let body = (try? JSONSerialization.data(withJSONObject: object)) ?? Data()
            return HTTPResponse(status: 200, headers: [("Content-Type", "application/json")], body: body)
        }
    }
}
