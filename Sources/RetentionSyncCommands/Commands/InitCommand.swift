import CLIKit
import Foundation
import Manifests

struct InitCommand: ParsedCommand {
    static let name = "init"
    static let summary = "Write a small app that validates cleanly"
    static let positional: Positional? = Positional("DIR", completion: .directory)
    static let helpPage = HelpPage(
        about: """
        Writes a small manifest directory to start from: an App with one product and one locale,
        a message in en-US, the Defaults that show it, a Flow with one rule, and the JSON Schema that
        editors with the YAML language server use to complete and check the files. DIR must be empty
        or not exist yet; nothing is ever overwritten.
        """)

    /// The files `init` writes, in the order it lists them.
    static let files: [(name: String, contents: String)] = [
        (".gitignore", """
        # The default file store of state and the decision and outcome events beside it: local to
        # this checkout, and the events hold keyed customer pseudonyms. Never commit them; a team
        # keeps both in S3 (environments.<env>.stateStore: s3://bucket/prefix in app.yaml).
        .retention-sync/

        """),
        ("app.yaml", """
        # yaml-language-server: $schema=retention-sync.schema.json
        # The app: its bundle id, the environments retention-sync manages, and its products.
        apiVersion: retention-sync/v1
        kind: App
        bundleId: com.example.app
        environments:
          sandbox:
            snapshotPath: .retention-sync/sandbox-snapshot.json
        products:
          - id: com.example.app.monthly
            locales: [en-US]

        """),
        ("messages.yaml", """
        # yaml-language-server: $schema=retention-sync.schema.json
        # A message per purpose, localized per locale. Header: 66 characters, body: 144.
        apiVersion: retention-sync/v1
        kind: Message
        name: stay-with-us
        localizations:
          en-US:
            header: Before you go
            body: Everything you have made is saved. Come back any time and pick up right where you left off.

        """),
        ("defaults.yaml", """
        # yaml-language-server: $schema=retention-sync.schema.json
        # The message Apple shows for each product and locale when no realtime answer comes.
        apiVersion: retention-sync/v1
        kind: Defaults
        defaults:
          - products: "*"
            locales: "*"
            message: stay-with-us

        """),
        ("cancel-flow.yaml", """
        # yaml-language-server: $schema=retention-sync.schema.json
        # Realtime rules: the first rule that matches answers. Add offers and experiments here.
        apiVersion: retention-sync/v1
        kind: Flow
        name: cancel-flow
        rules:
          - name: everyone
            response: { message: stay-with-us }

        """),
        (ManifestSchema.fileName, ManifestSchema.json),
    ]

    struct Options: CommandOptions {
        var path: String?

        func validate() throws(CommandError) {
            guard path != nil else { throw CommandError("init needs a directory: retention-sync init DIR", exitCode: .usage) }
        }
    }

    static func parse(_ arguments: inout Arguments, context: CommandContext) throws(CommandError) -> Options {
        Options(path: arguments.positional())
    }

    static func run(_ options: Options, context: CommandContext) async throws -> ExitCode {
        guard let path = options.path else { return .usage }
        let directory = context.url(path)
        let manager = FileManager.default
        var isDirectory: ObjCBool = false
        if manager.fileExists(atPath: directory.path, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else {
                throw CommandError("'\(path)' exists and is not a directory")
            }
            let contents = (try? manager.contentsOfDirectory(atPath: directory.path)) ?? []
            guard contents.isEmpty else {
                throw CommandError("'\(path)' is not empty; init only writes into an empty or new directory")
            }
        }
        do {
            try manager.createDirectory(at: directory, withIntermediateDirectories: true)
            for file in files {
                try Data(file.contents.utf8).write(to: directory.appendingPathComponent(file.name), options: .withoutOverwriting)
            }
        } catch {
            throw FileProblem.writing("the starting app into", path, error)
        }
        context.console.print("Wrote a starting app to \(path):")
        for file in files {
            context.console.print("  " + (path.hasSuffix("/") ? path : path + "/") + file.name)
        }
        context.console.print("")
        context.console.print("Next: retention-sync validate --manifests \(path)")
        return .success
    }
}
