import Foundation
@testable import CommandTestSupport
import Testing
import TestSupport

/// The built `retention-sync` as a pod runs it: no keys in its environment, only the web identity
/// token EKS mounts, exchanged with moto's STS for the role that reads the bucket.
@Suite("retention-sync state with S3 credentials from a web identity token")
struct S3CredentialCommandTests {
    @Test("a pod with a web identity token shows the state; without a role, one error names every source and no token")
    func stateShowWithWebIdentity() async throws {
        let server = try await MotoServer.start(roles: true)
        let sts = try STSGateway(moto: server)
        defer {
            sts.stop()
            server.stop()
        }
        let harness = try CommandHarness()
        let token = harness.root.appendingPathComponent("eks-token")
        try Data("pod-token-value".utf8).write(to: token)
        let store = "s3://\(server.bucket)/pod"
        var environment = ["HOME": harness.root.path, "AWS_REGION": "us-east-1", "AWS_ENDPOINT_URL_S3": server.endpoint.absoluteString,
                           "AWS_EC2_METADATA_DISABLED": "true", "AWS_ROLE_ARN": server.roleArn,
                           "AWS_WEB_IDENTITY_TOKEN_FILE": token.path, "AWS_ENDPOINT_URL_STS": sts.url.absoluteString]
        let arguments = ["state", "show", "--env", "sandbox", "--state-store", store, "--format", "json"]

        let show = try ChildProcess(arguments, in: harness.root, environment: environment, name: "show")
        #expect(await show.finish(within: 60) == 0, "\(show.errors)")
        let shown = try #require(try JSONSerialization.jsonObject(with: show.output) as? [String: Any])
        #expect(shown["store"] as? String == "\(store)/sandbox.json")
        #expect(sts.calls.map { $0["WebIdentityToken"] } == ["pod-token-value"])

        environment["AWS_ROLE_ARN"] = nil
        let none = try ChildProcess(arguments, in: harness.root, environment: environment, name: "show-none")
        #expect(await none.finish(within: 60) == 1)
        #expect(none.errors.contains("no AWS credentials; tried, in order: 1. environment variables (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY): not set; 2. web identity (AWS_ROLE_ARN, AWS_WEB_IDENTITY_TOKEN_FILE): AWS_WEB_IDENTITY_TOKEN_FILE is set but AWS_ROLE_ARN is not"), "\(none.errors)")
        #expect(none.errors.contains("5. EC2 instance metadata (IMDSv2): AWS_EC2_METADATA_DISABLED is true"), "\(none.errors)")
        #expect(!none.errors.contains("pod-token-value"))
        #expect(sts.calls.count == 1)
    }
}
