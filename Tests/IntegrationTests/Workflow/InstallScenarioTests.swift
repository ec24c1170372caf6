import Foundation
import Testing
import TestSupport
import YAML

/// Installing retention-sync on a runner: the action's script (`scripts/retention-sync-setup`, which
/// action.yml runs) choosing the release or the source route, and the release that release.yml makes
/// being exactly what the action, the Install page's curl lines and the image references fetch.
@Suite("Installing on a runner")
struct InstallScenarioTests {
    static let release = ".github/workflows/release.yml"
    static let setup = "retention-sync-setup"
    static let api = "https://api.example.test"

    /// Stands in for curl: answers from files under `web/`, named by the URL with every character
    /// outside [A-Za-z0-9._-] made '_' (a `.status` file beside one sets the HTTP status; no file is a 404),
    /// and logs every URL. Understands the options the setup script and the Install page use.
    func fakeCurl(_ s: Scenario) throws {
        try s.fake("curl", #"""
            out=""; format=""; remote=false; url=""; fail=false
            while [ $# -gt 0 ]; do
              case "$1" in
                -o|--output) out=$2; shift 2 ;;
                -w|--write-out) format=$2; shift 2 ;;
                -H|--header|--retry) shift 2 ;;
                -O|--remote-name) remote=true; shift ;;
                --fail) fail=true; shift ;;
                --*) shift ;;
                -*) [[ $1 == *O* ]] && remote=true; [[ $1 == *f* ]] && fail=true; shift ;;
                *) url=$1; shift ;;
              esac
            done
            echo "$url" >> "$FAKE_WEB/requests"
            key=$(printf '%s' "$url" | tr -c 'A-Za-z0-9._-' '_')
            status=404
            [ -f "$FAKE_WEB/$key" ] && status=200
            [ -f "$FAKE_WEB/$key.status" ] && status=$(cat "$FAKE_WEB/$key.status")
            $remote && out=${url##*/}
            if [ "$status" = 200 ]; then cp "$FAKE_WEB/$key" "${out:-/dev/stdout}"
            elif [ -n "$out" ]; then echo '{"message":"Not Found"}' > "$out"; fi
            [ -z "$format" ] || printf '%s' "$status"
            if [ "$status" != 200 ] && $fail; then echo "curl: (22) The requested URL returned error: $status" >&2; exit 22; fi
            exit 0
            """#)
    }

    func serve(_ s: Scenario, _ url: String, file: URL? = nil, text: String? = nil, status: Int? = nil) throws {
        let key = String(url.map { $0.isASCII && ($0.isLetter || $0.isNumber || "._-".contains($0)) ? $0 : "_" })
        try FileManager.default.createDirectory(at: s.url("web"), withIntermediateDirectories: true)
        if let file { try FileManager.default.copyItem(at: file, to: s.url("web/\(key)")) }
        if let text { try s.write(text, to: "web/\(key)") }
        if let status { try s.write("\(status)", to: "web/\(key).status") }
    }

    /// A stand-in for the runner's Swift toolchain (only `swift --version` is asked for on the route step).
    func fakeSwift(_ s: Scenario, version: String = "6.1.2") throws {
        try s.fake("swift", """
            [ "$1" = --version ] && { echo "Swift version \(version) (swift-\(version)-RELEASE)"; echo "Target: x86_64-unknown-linux-gnu"; exit 0; }
            echo "this test never compiles: swift $*" >&2; exit 99
            """)
    }

    func machine(_ s: Scenario) async throws -> String {
        try await s.run("uname", ["-m"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Runs release.yml's "Package" step on a stand-in binary, as the release job does for tag `tag`,
    /// and returns the folder holding what it attaches to the release.
    func packageRelease(_ s: Scenario, tag: String) async throws -> URL {
        let build = s.url("release-build")
        try s.write("#!/bin/sh\necho 'retention-sync \(tag.dropFirst()) (stand-in)'\n", to: "release-build/.build/release/retention-sync", executable: true)
        let script = try WorkflowFile.script(Self.release, step: "Package")
        let result = try await s.runStep(script, in: build, environment: ["GITHUB_REF_NAME": tag])
        #expect(result.status == 0, "release.yml's Package step: \(result.all)")
        return build
    }

    /// The files the release job uploads: its upload-artifact path pattern, applied to the build folder.
    func releaseAssets(_ build: URL) throws -> [String] {
        let upload = try #require(try WorkflowFile.steps(Self.release).first { $0["uses"]?.scalar?.text.hasPrefix("actions/upload-artifact@") == true })
        let pattern = try #require(upload["with"]?["path"]?.scalar?.text)
        #expect(pattern == "retention-sync-*.tar.gz*")
        return try FileManager.default.contentsOfDirectory(atPath: build.path)
            .filter { $0.hasPrefix("retention-sync-") && $0.contains(".tar.gz") }.sorted()
    }

    /// GitHub's answer to GET /repos/R/releases/tags/TAG (trimmed to the fields that matter), listing `assets`.
    func releaseAnswer(_ repository: String, tag: String, assets: [String]) -> String {
        let list = assets.enumerated().map { index, name in
            #"{"id": \#(900 + index), "name": "\#(name)", "state": "uploaded", "content_type": "application/gzip", "#
                + #""url": "\#(Self.api)/repos/\#(repository)/releases/assets/\#(900 + index)", "#
                + #""browser_download_url": "https://github.com/\#(repository)/releases/download/\#(tag)/\#(name)"}"#
        }
        return #"{"id": 1, "tag_name": "\#(tag)", "name": "\#(tag)", "draft": false, "prerelease": false, "assets": [\#(list.joined(separator: ", "))]}"#
    }

    /// The action as the runner lays it out for `uses: acme/retention-sync@REF`: …/_actions/acme/retention-sync/REF.
    func actionPath(_ s: Scenario, ref: String) throws -> String {
        let path = s.url("work/_actions/acme/retention-sync/\(ref)")
        guard !FileManager.default.fileExists(atPath: path.path) else { return path.path }
        try FileManager.default.createDirectory(at: path.deletingLastPathComponent(), withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(at: path, withDestinationURL: Repository.root)
        return path.path
    }

    func routeEnvironment(_ s: Scenario, ref: String) throws -> [String: String] {
        ["GITHUB_ACTION_PATH": try actionPath(s, ref: ref), "GITHUB_API_URL": Self.api, "FAKE_WEB": s.url("web").path, "GH_TOKEN": "t0ken"]
    }

    @Test("a team pinned to a published release downloads it, checks its SHA-256 and runs it")
    func publishedRelease() async throws {
        let s = try Scenario("install-release")
        defer { s.finish() }
        try fakeCurl(s)
        try fakeSwift(s)
        let build = try await packageRelease(s, tag: "v0.2.0")
        let assets = try releaseAssets(build)
        let archive = "retention-sync-0.2.0-linux-\(try await machine(s)).tar.gz"
        #expect(assets == [archive, "\(archive).sha256"])
        try serve(s, "\(Self.api)/repos/acme/retention-sync/releases/tags/v0.2.0", text: releaseAnswer("acme/retention-sync", tag: "v0.2.0", assets: assets))
        for (index, name) in assets.enumerated() {
            try serve(s, "\(Self.api)/repos/acme/retention-sync/releases/assets/\(900 + index)", file: build.appendingPathComponent(name))
        }
        let environment = try routeEnvironment(s, ref: "v0.2.0")

        let route = try await s.run(Self.setup, ["route"], environment: environment)
        #expect(route.status == 0, "\(route.all)")
        let outputs = s.outputs
        #expect(outputs["route"] == "release")
        #expect(outputs["archive"] == archive)
        let bin = try #require(outputs["bin-dir"])

        let install = try await s.run(Self.setup, ["release"], environment: environment.merging([
            "RS_BIN_DIR": bin, "RS_ARCHIVE": archive,
            "RS_ASSET_URL": try #require(outputs["asset-url"]), "RS_CHECKSUM_URL": try #require(outputs["checksum-url"]),
        ]) { $1 })
        #expect(install.status == 0, "\(install.all)")
        #expect(install.stdout.contains("retention-sync 0.2.0 (stand-in)"))
        #expect(s.read("github-path") == "\(bin)\n")
        #expect(FileManager.default.isExecutableFile(atPath: "\(bin)/retention-sync"))
        #expect(!s.read("web/requests").contains("swift"), "nothing was built")
    }

    @Test("a download that does not match its published SHA-256 is refused and nothing is installed")
    func tamperedRelease() async throws {
        let s = try Scenario("install-tampered")
        defer { s.finish() }
        try fakeCurl(s)
        let build = try await packageRelease(s, tag: "v0.2.0")
        let archive = try releaseAssets(build)[0]
        try s.write("evil", to: "evil.txt")
        try await s.run("tar", ["-czf", build.appendingPathComponent(archive).path, "-C", s.folder.path, "evil.txt"])
        try serve(s, "\(Self.api)/a/archive", file: build.appendingPathComponent(archive))
        try serve(s, "\(Self.api)/a/checksum", file: build.appendingPathComponent("\(archive).sha256"))
        let bin = s.url("bin").path

        let install = try await s.run(Self.setup, ["release"], environment: [
            "FAKE_WEB": s.url("web").path, "RS_BIN_DIR": bin, "RS_ARCHIVE": archive,
            "RS_ASSET_URL": "\(Self.api)/a/archive", "RS_CHECKSUM_URL": "\(Self.api)/a/checksum",
        ])
        #expect(install.status == 1)
        #expect(install.stderr.contains("does not match its published SHA-256; nothing was installed"))
        #expect(!FileManager.default.fileExists(atPath: "\(bin)/retention-sync"))
        #expect(s.read("github-path").isEmpty)
    }

    @Test("a fork with no release builds the pinned ref from source, cached by ref and toolchain")
    func forkWithoutRelease() async throws {
        let s = try Scenario("install-source")
        defer { s.finish() }
        try fakeCurl(s)
        try fakeSwift(s, version: "6.1.2")
        try FileManager.default.createDirectory(at: s.url("web"), withIntermediateDirectories: true)
        // No release: GitHub answers 404 for the tag (the fake has no file for it).
        let route = try await s.run(Self.setup, ["route"], environment: try routeEnvironment(s, ref: "v0.2.0"))
        #expect(route.status == 0, "\(route.all)")
        #expect(route.stderr.contains("acme/retention-sync has no published release v0.2.0: building v0.2.0 from source"))
        #expect(s.read("web/requests") == "\(Self.api)/repos/acme/retention-sync/releases/tags/v0.2.0\n")
        let first = s.outputs
        #expect(first["route"] == "source")
        let key = try #require(first["cache-key"])
        #expect(key.contains("-v0.2.0-swift-6.1.2-RELEASE-"), "\(key)")
        #expect(first["bin-dir"]?.hasSuffix("/\(key)") == true)

        // The same ref with another toolchain, and another ref with the same toolchain: other cache entries.
        try fakeSwift(s, version: "6.3.1")
        _ = try await s.run(Self.setup, ["route"], environment: try routeEnvironment(s, ref: "v0.2.0"))
        let otherToolchain = try #require(s.outputs["cache-key"])
        _ = try await s.run(Self.setup, ["route"], environment: try routeEnvironment(s, ref: "main"))
        let otherRef = try #require(s.outputs["cache-key"])
        #expect(Set([key, otherToolchain, otherRef]).count == 3)
        #expect(otherRef.contains("-main-swift-6.3.1-RELEASE-"))

        // A cache hit restores the binary into bin-dir; the path step puts it on the PATH, compiling nothing.
        let bin = try #require(first["bin-dir"])
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
        try "#!/bin/sh\necho 'retention-sync 0.2.0 (cached)'\n".write(toFile: "\(bin)/retention-sync", atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: "\(bin)/retention-sync")
        let path = try await s.run(Self.setup, ["path"], environment: ["RS_BIN_DIR": bin])
        #expect(path.status == 0 && path.stdout.contains("(cached)"), "\(path.all)")
        #expect(s.read("github-path") == "\(bin)\n")
    }

    @Test("a release without this machine's archive falls back to building from source")
    func releaseWithoutThisMachine() async throws {
        let s = try Scenario("install-other-arch")
        defer { s.finish() }
        try fakeCurl(s)
        try fakeSwift(s)
        let other = try await machine(s) == "aarch64" ? "x86_64" : "aarch64"
        try serve(s, "\(Self.api)/repos/acme/retention-sync/releases/tags/v0.2.0", text: releaseAnswer("acme/retention-sync", tag: "v0.2.0", assets: [
            "retention-sync-0.2.0-linux-\(other).tar.gz", "retention-sync-0.2.0-linux-\(other).tar.gz.sha256",
        ]))
        let route = try await s.run(Self.setup, ["route"], environment: try routeEnvironment(s, ref: "v0.2.0"))
        #expect(route.status == 0, "\(route.all)")
        #expect(s.outputs["route"] == "source")
        #expect(route.stderr.contains("has no retention-sync-0.2.0-linux-"))
    }

    @Test("GitHub's API failing stops the job instead of quietly compiling")
    func apiFailure() async throws {
        let s = try Scenario("install-api-down")
        defer { s.finish() }
        try fakeCurl(s)
        try fakeSwift(s)
        try serve(s, "\(Self.api)/repos/acme/retention-sync/releases/tags/v0.2.0", text: "{}", status: 503)
        let route = try await s.run(Self.setup, ["route"], environment: try routeEnvironment(s, ref: "v0.2.0"))
        #expect(route.status == 1)
        #expect(route.stderr.contains("GitHub answered 503"))
        #expect(s.outputs["route"] == nil)
    }

    @Test("without a release or a Swift toolchain the job fails and says what runner to use")
    func noToolchain() async throws {
        let s = try Scenario("install-no-swift")
        defer { s.finish() }
        try fakeCurl(s)
        try s.fake("swift", "exit 127")
        let route = try await s.run(Self.setup, ["route"], environment: try routeEnvironment(s, ref: "main"))
        #expect(route.status == 1)
        #expect(route.stderr.contains("no Swift toolchain on this runner"))

        try fakeSwift(s, version: "5.10.1")
        let old = try await s.run(Self.setup, ["route"], environment: try routeEnvironment(s, ref: "main"))
        #expect(old.status == 1)
        #expect(old.stderr.contains("needs Swift 6.0 or later; this runner has swift-5.10.1-RELEASE"))
        #expect(s.outputs["route"] == nil)
    }

    @Test("the Install page's curl lines download exactly what release.yml attaches, and the checksum passes")
    func installPageCurl() async throws {
        let s = try Scenario("install-curl")
        defer { s.finish() }
        try fakeCurl(s)
        let page = try Repository.text("docs/install.md")
        let heading = try #require(page.range(of: "**Linux, release binary**"))
        let open = try #require(page.range(of: "```sh\n", range: heading.upperBound..<page.endIndex))
        let close = try #require(page.range(of: "```\n", range: open.upperBound..<page.endIndex))
        let block = String(page[open.upperBound..<close.lowerBound])
        let version = try #require(block.split(separator: "\n").first { $0.hasPrefix("version=") }).dropFirst("version=".count)
        let build = try await packageRelease(s, tag: "v\(version)")
        for name in try releaseAssets(build) {
            try serve(s, "https://github.com/retention-sync/retention-sync/releases/download/v\(version)/\(name)", file: build.appendingPathComponent(name))
        }
        // sudo: apt-get is recorded, tar unpacks into a folder on PATH instead of /usr/local/bin.
        try s.fake("sudo", """
            echo "$*" >> "$FAKE_WEB/sudo"
            [ "$1" = tar ] || exit 0
            shift; args=(); for a in "$@"; do [ "$a" = /usr/local/bin ] && a="\(s.bin.path)"; args+=("$a"); done
            exec tar "${args[@]}"
            """)
        let work = s.url("download")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)

        let result = try await s.runStep(block, in: work, environment: ["FAKE_WEB": s.url("web").path])
        #expect(result.status == 0, "\(result.all)")
        #expect(result.stdout.contains(": OK"), "sha256sum --check passed")
        #expect(result.stdout.contains("retention-sync \(version) (stand-in)"))
        let requested = s.read("web/requests").split(separator: "\n").map { String($0.split(separator: "/").last ?? "") }
        #expect(requested.sorted() == (try releaseAssets(build)))
        #expect(s.read("web/sudo").contains("apt-get install -y libcurl4 libssl3 libyaml-0-2"))
    }

    @Test("one version is pinned everywhere: the action's ref in every workflow, the curl install, the image tags and the binary's own")
    func onePinnedVersion() throws {
        let cli = try Repository.text("Sources/RetentionSyncCommands/Support/CLI.swift")
        let versionLine = try #require(cli.split(separator: "\n").first { $0.contains("static let version = \"") })
        let version = String(versionLine.split(separator: "\"")[1])
        for file in WorkflowFilesTests.files {
            let text = try Repository.text("\(WorkflowFilesTests.folder)/\(file)")
            let uses = text.split(separator: "\n").filter { $0.contains("uses: retention-sync/retention-sync@") }
            #expect(!uses.isEmpty, "\(file) does not install with the action")
            for line in uses { #expect(line.hasSuffix("@v\(version)"), "\(file): \(line)") }
        }
        #expect(try Repository.text("docs/install.md").contains("version=\(version)\n"))
        // release.yml pushes ghcr.io/<repository, lower case>:<tag>; the docs and the Kubernetes example pull that.
        let release = try Repository.text(Self.release)
        #expect(release.contains(#"name=ghcr.io/${GITHUB_REPOSITORY,,}"#) && release.contains("${{ steps.image.outputs.name }}:${{ github.ref_name }}"))
        for path in ["docs/install.md", "examples/kubernetes/deployment.yaml", "docs/workflows.md", "Dockerfile", "README.md"] {
            let text = try Repository.text(path)
            let images = text.components(separatedBy: "ghcr.io/").dropFirst().map { String($0.prefix { !$0.isWhitespace && !"`),".contains($0) }) }
            for image in images where !image.hasPrefix("OWNER/") { // the Install page's pattern, not a reference
                #expect(["retention-sync/retention-sync", "retention-sync/retention-sync:v\(version)"].contains(image), "\(path): ghcr.io/\(image)")
            }
        }
        // release.yml builds both architectures the Install page promises.
        #expect(release.contains("runner: [ubuntu-24.04, ubuntu-24.04-arm]"))
        #expect(try Repository.text("docs/install.md").contains("x86_64 and aarch64"))
    }
}
