import CLIKit
import Foundation
import Manifests
import Reconciler
import RetentionMessaging
import RetentionMessagingModels
import Operations

struct IdCommand: ParsedCommand {
    static let name = "id"
    static let summary = "Print the identifiers the manifests derive"
    static let manifests = Option.manifests()
    static let env = Option("--env", value: "ENV", of: Environment.self,
                            help: ["Only this environment (default: every environment the App manages)"])
    static let format = Option("--format", value: "FORMAT", of: StatusFormat.self, default: .text, help: ["How to print it"])

    static let helpPage = HelpPage(
        about: """
        Prints every message and image identifier the manifests derive, with its logical name,
        locale and content version, and the exact UUIDv5 name string it is computed from, so any
        UUIDv5 library can recompute it. Offline: no credentials, no requests.
        """,
        options: [manifests, env, format])

    struct Listing: Encodable {
        var formatVersion = "1.0"
        var namespace: String
        var environments: [EnvironmentListing]
        enum CodingKeys: String, CodingKey { case formatVersion = "format_version", namespace, environments }
    }

    struct EnvironmentListing: Encodable {
        var environment: Environment
        var images: [Entry]
        var messages: [Entry]
    }

    struct Entry: Encodable {
        var identifier: String
        var kind: String
        var name: String
        var locale: String?
        var productScope: String?
        var version: String
        var nameString: String
        enum CodingKeys: String, CodingKey {
            case identifier, kind, name, locale, productScope = "product_scope", version, nameString = "uuid5_name"
        }
    }

    struct Options: CommandOptions {
        var path: String
        var only: Environment?
        var format: StatusFormat

        func validate() throws(CommandError) {}
    }

    static func parse(_ arguments: inout Arguments, context: CommandContext) throws(CommandError) -> Options {
        Options(path: try arguments.value(Self.manifests, as: String.self) ?? Option.defaultManifests,
                only: try arguments.value(Self.env, as: Environment.self),
                format: try arguments.value(Self.format, as: StatusFormat.self) ?? .text)
    }

    static func run(_ options: Options, context: CommandContext) async throws -> ExitCode {
        let (path, only, format) = (options.path, options.only, options.format)
        let manifests = try EnvironmentOptions.workspaceStep(context: context) { () throws(Workspace.Failure) in
            try Workspace.load(directory: context.url(path), displayPath: path)
        }
        let declared = manifests.app.environments.map(\.environment)
        let environments = only.map { [$0] } ?? (declared.isEmpty ? Environment.allCases : declared)
        var listing = Listing(namespace: manifests.app.identityNamespace ?? Identities.namespace, environments: [])
        for environment in environments {
            let desired = try EnvironmentOptions.workspaceStep(context: context) { () throws(Workspace.Failure) in
                (try Workspace.derive(manifests, environment: environment), [Diagnostic]())
            }
            listing.environments.append(EnvironmentListing(
                environment: environment,
                images: desired.images.map { image in
                    Entry(identifier: image.identifier, kind: "image", name: image.names.joined(separator: ", "), locale: nil,
                          productScope: nil, version: image.size.rawValue + ":" + image.sha256,
                          nameString: Identities.imageName(bundleId: desired.bundleId, environment: environment,
                                                           size: image.size, sha256: image.sha256))
                },
                messages: desired.messages.map { message in
                    Entry(identifier: message.identifier, kind: "message", name: message.name, locale: message.locale,
                          productScope: message.productScope, version: message.contentVersion,
                          nameString: Identities.messageName(bundleId: desired.bundleId, environment: environment,
                                                             productScope: message.productScope, locale: message.locale,
                                                             purpose: message.name, contentVersion: message.contentVersion))
                }))
        }
        if format == .json {
            context.console.write(String(decoding: try CanonicalJSON.encodePretty(listing), as: UTF8.self) + "\n")
            return .success
        }
        var lines = ["Identity namespace \(listing.namespace)"]
        for environment in listing.environments {
            lines.append("")
            lines.append("\(environment.environment.rawValue): \(environment.images.count) image\(environment.images.count == 1 ? "" : "s"), \(environment.messages.count) message\(environment.messages.count == 1 ? "" : "s")")
            for image in environment.images {
                lines.append("  \(image.identifier)  image    \(image.name) \(image.version.prefix(while: { $0 != ":" })) sha256 \(image.version.split(separator: ":").last?.prefix(12) ?? "")…")
                lines.append("      uuid5 name: \(image.nameString)")
            }
            for message in environment.messages {
                lines.append("  \(message.identifier)  message  \(message.name) (\(message.locale ?? "")) product \(message.productScope ?? "*") version \(message.version)")
                lines.append("      uuid5 name: \(message.nameString)")
            }
        }
        context.console.print(lines.joined(separator: "\n"))
        return .success
    }
}
