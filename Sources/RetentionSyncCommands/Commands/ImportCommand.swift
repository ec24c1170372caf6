import Basics
import CLIKit
import Foundation
import Manifests
import Reconciler
import RetentionMessaging
import RetentionMessagingModels
import StateStore
import Synchronization
import Views
import Operations
#if canImport(Glibc)
import Glibc
#endif

/// `retention-sync import --env ENV`: writes manifests for what Apple already holds in one
/// environment, so that a team running Retention Messaging by other means adopts it without
/// uploading anything again.
struct ImportCommand: ParsedCommand {
    static let name = "import"
    static let summary = "Write manifests for the messages, images and defaults Apple already holds"

    static let helpPage = HelpPage(
        about: """
        Reads what Apple holds in the environment (the message and image lists with their review
        states, the default of every product and locale the App declares, the realtime URL) and
        writes a new file, imported-<env>.yaml (or imported-<env>-2.yaml, …; never an existing
        file), that declares every message the tool did not make as an ExternalMessage, every
        such image as an ExternalImage, and every default the manifests do not assign yet,
        pointing at those messages. When the App declares no realtime URL for the environment,
        it declares Apple's in the App manifest (a comment and one line added, nothing else
        changed), so that reverting a later switch of the URL sets it back. Right after, plan
        for the environment says "No changes",
        and the next apply records the adoption in the state. With --seed-state, import
        records what it read in the state store itself, so that first plan re-reads only a
        window of defaults instead of every pair again. With --names, the vendor's export
        (CSV) names the external messages it writes and gives their assumed text. Says how many calls it makes,
        and the least time Apple's hourly budget allows, before it starts; on long runs a
        progress line at each tenth of them (standard error). Writes nothing when a call fails
        (no API access: 401, 403 or 404) or when it is stopped while reading (Ctrl-C: exit
        130); the file is written whole or not at all, so run it again.
        """,
        options: EnvironmentOptions.connection + [names, acceptDrift, seedState],
        column: 25,
        footer: EnvironmentOptions.credentialsHelp)

    static let seedState = Option("--seed-state", help: [
        "Afterwards, record in the state store what the read found (the defaults",
        "and realtime URL Apple holds as the manifests now assign them), so the",
        "next plan re-reads 10 defaults, not all; needs write access to the store",
    ])

    static let names = Option("--names", value: "FILE", help: [
        "The vendor's export of its messages (CSV: identifier,name and optionally",
        "locale,header,body): names the external messages and their assumed text",
    ])

    static let acceptDrift = Option("--accept-drift", help: [
        "Write the defaults that changed at Apple since the manifests assigned them",
        "into the Defaults as Apple holds them, instead of leaving the next plan to set them back",
    ])

    struct Options: CommandOptions {
        var environment: EnvironmentOptions
        var seedState: Bool
        var names: String?
        var acceptDrift: Bool

        func validate() throws(CommandError) {}
    }

    static func parse(_ arguments: inout Arguments, context: CommandContext) throws(CommandError) -> Options {
        Options(environment: try EnvironmentOptions.parse(&arguments, context: context), seedState: arguments.flag(Self.seedState),
                names: try arguments.value(Self.names, as: String.self), acceptDrift: arguments.flag(Self.acceptDrift))
    }

    static func run(_ options: Options, context: CommandContext) async throws -> ExitCode {
        // Only the real process takes over its signals; tests run import in-process beside others.
        try await ImportOperation.run(options.environment, context: context, provider: .live, handleSignals: true, seedState: options.seedState,
                                      vendor: try vendorNames(options.names, context: context), acceptDrift: options.acceptDrift)
    }

    /// Parses, checks and imports from the API the caller chose (the tests': the emulator).
    static func execute(_ arguments: inout Arguments, context: CommandContext, provider: APIProvider) async throws(CommandError) -> ExitCode {
        let options = try parsed(&arguments, context: context)
        return try await ImportOperation.run(options.environment, context: context, provider: provider, seedState: options.seedState,
                                             vendor: try vendorNames(options.names, context: context), acceptDrift: options.acceptDrift)
    }

    /// The `--names` file, read and checked before anything is read from Apple.
    static func vendorNames(_ path: String?, context: CommandContext) throws(CommandError) -> VendorNames? {
        guard let path else { return nil }
        return try VendorNames.parse(Array(readFile(path, what: "the vendor's names (--names)", context: context)), file: path)
    }
}
