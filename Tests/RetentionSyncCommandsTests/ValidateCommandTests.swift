import CLIKit
import Foundation
import TestSupport
import RetentionSyncCommands
import Testing

/// The repository's root, found from this file's place.
private let root = Repository.root

private func validate(_ arguments: [String], in directory: URL = root) async -> (code: ExitCode, out: String, err: String) {
    let captured = CapturedConsole()
    let context = CommandContext(console: captured.console, environment: [:], currentDirectory: directory)
    let code = await CLI.run(["validate"] + arguments, context: context)
    return (code, captured.stdout, captured.stderr)
}

@Suite("retention-sync validate")
struct ValidateCommandTests {
    @Test("the example app in manifests/ validates with nothing to report (the default directory)")
    func exampleApp() async {
        let result = await validate([])
        #expect(result.code == .success)
        #expect(result.out == "manifests: no problems (2 products, 4 images, 4 messages in 12 localizations, 6 defaults, 1 flow)\n")
        #expect(result.err == "")
    }

    @Test("an invalid set exits 1 and prints file:line:column diagnostics with a count")
    func invalidSet() async {
        let result = await validate(["--manifests", "fixtures/manifests/invalid/header-too-long"])
        #expect(result.code == .failure)
        #expect(result.out.hasPrefix("fixtures/manifests/invalid/header-too-long/messages.yaml:25:13: error: header is 67 characters long"))
        #expect(result.out.hasSuffix("1 error, 0 warnings\n"))
    }

    @Test("warnings pass, and fail only with --strict")
    func strict() async {
        let lenient = await validate(["--manifests", "fixtures/manifests/invalid/unused-image"])
        #expect(lenient.code == .success)
        #expect(lenient.out.contains("warning: no message uses image 'spare'"))
        let strict = await validate(["--manifests", "fixtures/manifests/invalid/unused-image", "--strict"])
        #expect(strict.code == .failure)
    }

    @Test("--format json prints the versioned JSON object")
    func json() async throws {
        let result = await validate(["--manifests=fixtures/manifests/invalid/unknown-kind", "--format", "json"])
        #expect(result.code == .failure)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.out.utf8)) as? [String: Any])
        #expect(object["format_version"] as? String == "1.0")
        #expect(object["error_count"] as? Int == 1)
        let first = try #require((object["diagnostics"] as? [[String: Any]])?.first)
        #expect(first["code"] as? String == "unknown-kind")
        #expect(first["hint"] as? String == "did you mean 'Image'?")
    }

    @Test("--format github prints workflow annotations")
    func github() async {
        let result = await validate(["--manifests", "fixtures/manifests/invalid/png-with-alpha", "--format", "github"])
        #expect(result.code == .failure)
        #expect(result.out.hasPrefix("::error file=fixtures/manifests/invalid/png-with-alpha/images.yaml,line=4,col=7,title=image-has-alpha::"))
    }

    @Test("an unknown format is a usage error")
    func unknownFormat() async {
        let result = await validate(["--format", "xml"])
        #expect(result.code == .usage)
        #expect(result.err == "error: --format must be text, json or github, not 'xml'\n")
    }

    @Test("a missing directory says how to create one")
    func missingDirectory() async {
        let result = await validate(["--manifests", "no-such-dir"])
        #expect(result.code == .failure)
        #expect(result.out.contains("error: cannot read the manifest directory 'no-such-dir'"))
        #expect(result.out.contains("retention-sync init no-such-dir"))
    }
}
