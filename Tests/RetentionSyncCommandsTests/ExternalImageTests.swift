import CLIKit
import Emulator
import Foundation
import HTTPCore
import RetentionMessagingModels
@testable import CommandTestSupport
import Testing

/// A team that adopts an app a vendor set up keeps showing the vendor's pictures in its own
/// messages: `kind: ExternalImage` declares them by identifier, and the emulator holds them as
/// `POST /emulator/seed` put them there.
@Suite("external images")
struct ExternalImageTests: ExternalImageFixtures {
    /// The team's own picture in place of the vendor's: an `Image` the message shows instead.
    static func showOwnHero(_ harness: CommandHarness) throws {
        try """
            apiVersion: retention-sync/v1
            kind: Image
            name: sunrise-hills
            file: images/hero.png
            size: FULL_SIZE

            """.write(to: harness.file("manifests/images.yaml"), atomically: true, encoding: .utf8)
        try harness.edit("manifests/messages.yaml", replacing: "name: vendor-hero", with: "name: sunrise-hills")
    }

    static func seedImages(_ harness: CommandHarness, _ images: [(String, String, String)], in environment: Environment) async throws {
        let list = images.map { #"{"identifier": "\#($0.0)", "state": "\#($0.1)", "size": "\#($0.2)"}"# }.joined(separator: ", ")
        let response = try await ExternalContentTests.seed(harness, #"{"images": [\#(list)]}"#, in: environment)
        #expect(response.status == 200, "\(String(decoding: response.body, as: UTF8.self))")
    }

    static func stateDocument(_ harness: CommandHarness, _ environment: Environment) throws -> [String: Any] {
        let data = try Data(contentsOf: harness.file("manifests/.retention-sync/\(environment.rawValue)-state.json"))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    static func adopted(_ harness: CommandHarness, _ environment: Environment, _ identifier: String) throws -> [String: Any]? {
        (try stateDocument(harness, environment)["adopted"] as? [[String: Any]])?.first { $0["identifier"] as? String == identifier }
    }

    static func deletes(_ plan: [String: Any]) -> [String] {
        ExternalContentTests.actions(plan).filter { ($0["kind"] as? String)?.hasPrefix("delete_") == true }.compactMap { $0["identifier"] as? String }.sorted()
    }

    static func inventory(_ plan: [String: Any], _ identifier: String) throws -> [String: Any] {
        try #require((plan["inventory"] as? [[String: Any]])?.first { $0["identifier"] as? String == identifier }, "no inventory item \(identifier)")
    }

    @Test("validate refuses a bad ExternalImage at file:line:column: an identifier that is no UUID, one declared twice, a name declared twice or that an Image has, and a message that shows one in an environment where it has no identifier")
    func validationErrors() async throws {
        let harness = try CommandHarness()
        try Self.writeManifests(harness, images: """
            apiVersion: retention-sync/v1
            kind: ExternalImage
            name: vendor-hero
            identifiers:
              sandbox: 5e4d3c2b-1a09-4f8e-9d7c-6b5a4e3d2c1
              production: \(Self.productionHero)
            ---
            apiVersion: retention-sync/v1
            kind: ExternalImage
            name: vendor-icon
            identifiers:
              production: \(Self.productionIcon)
            ---
            apiVersion: retention-sync/v1
            kind: ExternalImage
            name: vendor-copy
            identifiers:
              production: \(Self.productionHero)
            ---
            apiVersion: retention-sync/v1
            kind: ExternalImage
            name: sunrise-hills
            identifiers:
              production: \(Self.stranger)
            ---
            apiVersion: retention-sync/v1
            kind: Image
            name: sunrise-hills
            file: images/hero.png
            size: FULL_SIZE
            ---
            apiVersion: retention-sync/v1
            kind: ExternalImage
            name: vendor-icon
            identifiers:
              production: 44444444-5555-4666-8777-888888888888
            """)
        let run = await harness.run(["validate", "--manifests", harness.file("manifests").path])
        #expect(run.code != .success)
        let lines = (run.stdout + run.stderr).split(separator: "\n").map(String.init)
        /// The diagnostic at `place` (`file:line:column`), which must say `text`.
        func diagnostic(_ place: String) -> String? { lines.first { $0.contains("/\(place): ") } }
        #expect(diagnostic("vendor-images.yaml:5:12")?.hasSuffix("vendor-images.yaml:5:12: error: the sandbox identifier of external image 'vendor-hero', '5e4d3c2b-1a09-4f8e-9d7c-6b5a4e3d2c1', is not a UUID [invalid-identifier]") == true,
                "\(lines)")
        // Checked in name order: vendor-copy comes first, so the error is at vendor-hero's identifier.
        #expect(diagnostic("vendor-images.yaml:6:15")?.hasSuffix("vendor-images.yaml:6:15: error: external images 'vendor-copy' and 'vendor-hero' name the same production identifier \(Self.productionHero) [duplicate-identifier]") == true,
                "\(lines)")
        #expect(diagnostic("vendor-images.yaml:22:7")?.hasSuffix("vendor-images.yaml:22:7: error: image name 'sunrise-hills' is used by an Image and an ExternalImage [duplicate-image]") == true,
                "\(lines)")
        let twice = try #require(diagnostic("vendor-images.yaml:34:7"), "\(lines)")
        #expect(twice.hasSuffix("vendor-images.yaml:34:7: error: image name 'vendor-icon' is used twice [duplicate-image]"))
        #expect(lines[(try #require(lines.firstIndex(of: twice)) + 1)].hasSuffix("the first is at \(harness.file("manifests").path)/vendor-images.yaml:10:7; give each image its own name"))
        // The use and the declaration: the message's bullet point, and where vendor-icon is declared.
        let missing = try #require(diagnostic("messages.yaml:10:41"), "\(lines)")
        #expect(missing.hasSuffix("messages.yaml:10:41: error: external image 'vendor-icon' has no sandbox identifier, but message 'stay-calm' (en-US) shows it as a bullet point icon, and messages are uploaded to every environment the App declares [missing-external-identifier]"),
                "\(missing)")
        let hintIndex = try #require(lines.firstIndex(of: missing))
        let hint = lines[(hintIndex + 1)...].first { $0.contains("hint:") } ?? ""
        #expect(hint.hasSuffix("vendor-images.yaml:10:7), or show a managed Image here"), "\(hint)")
        #expect(hint.contains("add its sandbox identifier under 'identifiers:' ("), "\(hint)")

        // A misspelt name is no external image, and the hint finds the one meant.
        try Self.writeManifests(harness)
        try harness.edit("manifests/messages.yaml", replacing: "image: vendor-icon", with: "image: vendor-icn")
        let typo = await harness.run(["validate", "--manifests", harness.file("manifests").path])
        let output = typo.stdout + typo.stderr
        #expect(output.contains("messages.yaml:10:41: error: no image named 'vendor-icn' [unknown-image]"), "\(output)")
        #expect(output.contains("did you mean 'vendor-icon'?"), "\(output)")
    }

    @Test("a managed message that shows a vendor's images is uploaded with their identifiers, and its default waits until App Review approves the image (production)")
    func uploadedWithTheIdentifierAndHeldUntilApproved() async throws {
        let harness = try CommandHarness()
        try Self.writeManifests(harness)
        try await Self.seedImages(harness, [(Self.productionHero, "PENDING", "FULL_SIZE"), (Self.productionIcon, "APPROVED", "BULLET_POINT")],
                                  in: .production)

        let first = try await ExternalContentTests.planJSON(harness, ["--env", "production"])
        let actions = ExternalContentTests.actions(first)
        #expect(!actions.contains { ($0["kind"] as? String) == "upload_image" }, "an external image is never uploaded")
        let upload = try #require(actions.first { ($0["kind"] as? String) == "upload_message" })
        #expect(upload["state"] as? String == "ready")
        let messageId = try #require(upload["identifier"] as? String)

        let apply = await harness.run(["apply", "--env", "production", "--auto-approve"])
        #expect(apply.code == .success, "\(apply.stdout)\(apply.stderr)")
        let held = harness.emulator.state(of: .production)
        let body = try #require(held.messages[messageId]?.body)
        #expect(body.image?.imageIdentifier == Self.productionHero)
        #expect(body.bulletPoints?.map(\.imageIdentifier) == [Self.productionIcon])
        #expect(held.images.count == 2, "nothing uploaded besides the message")
        #expect(held.defaults[Self.pair] == nil, "the default waits for review")
        let adoption = try #require(try Self.adopted(harness, .production, Self.productionHero), "the apply records the adoption")
        #expect(adoption["kind"] as? String == "image")
        #expect(adoption["name"] as? String == "vendor-hero")

        // App Review approves the message; the vendor's picture is still PENDING, so the default still waits.
        try harness.emulator.approveMessage(messageId, in: .production)
        let waiting = try await ExternalContentTests.planJSON(harness, ["--env", "production"])
        let blocked = try #require(ExternalContentTests.actions(waiting).first { ($0["kind"] as? String) == "set_default" })
        #expect(blocked["state"] as? String == "blocked")
        let waitingFor = try #require(blocked["waiting_for"] as? [[String: Any]])
        #expect(waitingFor.count == 1)
        #expect(waitingFor.first?["kind"] as? String == "image")
        #expect(waitingFor.first?["name"] as? String == "vendor-hero")
        #expect(waitingFor.first?["state"] as? String == "PENDING")
        let text = await harness.run(["plan", "--env", "production"])
        #expect(text.stdout.contains("image 'vendor-hero': PENDING review"), "\(text.stdout)")
        #expect(await harness.run(["apply", "--env", "production", "--auto-approve"]).code == .success)
        #expect(harness.emulator.state(of: .production).defaults[Self.pair] == nil, "apply leaves the default alone while the image is PENDING")

        let status = await harness.run(["status", "--env", "production"])
        let statusLines = status.stdout.split(separator: "\n")
        let heroLine = try #require(statusLines.firstIndex { $0.contains(Self.productionHero) }, "\(status.stdout)")
        #expect(statusLines[heroLine].hasSuffix("PENDING       vendor-hero external (content unknown)"), "\(statusLines[heroLine])")
        let markdown = await harness.run(["status", "--env", "production", "--format", "markdown"])
        #expect(markdown.stdout.contains("|  | `\(Self.productionHero)` | PENDING | 0 d | vendor-hero external (content unknown) | kept: in use |"), "\(markdown.stdout)")
        let json = await harness.run(["status", "--env", "production", "--format", "json"])
        let document = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let entries = try #require(document["images"] as? [[String: Any]])
        let hero = try #require(entries.first { $0["identifier"] as? String == Self.productionHero })
        #expect(hero["external"] as? Bool == true && hero["name"] as? String == "vendor-hero")
        #expect(hero["next"] as? String == "kept: in use", "a message of the manifests shows it")
        #expect(hero["state_age_days"] as? Int == 0, "the review age counts from the adoption the state recorded")
        #expect(!(document["messages"] as? [[String: Any]] ?? []).contains { $0["external"] != nil }, "only external entries say so")

        let preview = await harness.run(["preview", "--out", "site", "--env", "production"])
        #expect(preview.code == .success, "\(preview.stderr)")
        let page = try String(contentsOf: harness.file("site/messages/stay-calm.html"), encoding: .utf8)
        #expect(page.contains(">[external image vendor-hero (content unknown)]</span>"))
        #expect(page.contains(" title=\"[external image vendor-icon (content unknown)]\">?</span>"))
        let index = try String(contentsOf: harness.file("site/index.html"), encoding: .utf8)
        #expect(index.contains("<span class=\"state-APPROVED\">APPROVED</span> <span class=\"muted\">(image vendor-hero (external) PENDING)</span>"),
                "the index says what holds the message back")

        // App Review approves the picture: the default is set to the message that shows it.
        try harness.emulator.approveImage(Self.productionHero, in: .production)
        let ready = try await ExternalContentTests.planJSON(harness, ["--env", "production"])
        #expect(ExternalContentTests.actions(ready).first { ($0["kind"] as? String) == "set_default" }?["state"] as? String == "ready")
        #expect(await harness.run(["apply", "--env", "production", "--auto-approve"]).code == .success)
        #expect(harness.emulator.state(of: .production).defaults[Self.pair] == messageId)
        let states = try #require(try Self.adopted(harness, .production, Self.productionHero)?["review_states"] as? [[String: Any]])
        #expect(states.compactMap { $0["state"] as? String } == ["PENDING", "APPROVED"])
        let converged = await harness.run(["plan", "--env", "production"])
        #expect(converged.stdout.contains("No changes. production matches the manifests."), "\(converged.stdout)")
    }

    @Test("a vendor's image App Review rejected makes the default that would show it an error, like rejected managed content")
    func rejectedImage() async throws {
        let harness = try CommandHarness()
        try Self.writeManifests(harness)
        try await Self.seedImages(harness, [(Self.productionHero, "REJECTED", "FULL_SIZE"), (Self.productionIcon, "APPROVED", "BULLET_POINT")],
                                  in: .production)
        let plan = try await ExternalContentTests.planJSON(harness, ["--env", "production"])
        let setDefault = try #require(ExternalContentTests.actions(plan).first { ($0["kind"] as? String) == "set_default" })
        #expect(setDefault["state"] as? String == "error")
        #expect((setDefault["error"] as? String)?.contains("uses REJECTED content: image 'vendor-hero': REJECTED") == true, "\(setDefault)")
    }

    @Test("a vendor's image Apple does not list, or lists at another size, makes the upload of the message that shows it an error, and nothing is uploaded")
    func missingOrWrongSize() async throws {
        let harness = try CommandHarness()
        try Self.writeManifests(harness)
        try await Self.seedImages(harness, [(Self.sandboxHero, "APPROVED", "BULLET_POINT")], in: .sandbox)
        func uploadError() async throws -> String? {
            let plan = try await ExternalContentTests.planJSON(harness, ["--env", "sandbox"])
            let upload = try #require(ExternalContentTests.actions(plan).first { ($0["kind"] as? String) == "upload_message" })
            #expect(upload["state"] as? String == "error")
            return upload["error"] as? String
        }
        #expect(try await uploadError() == "it shows external image 'vendor-hero' \(Self.sandboxHero) as its image, which must be FULL_SIZE, but Apple's sandbox image list holds a BULLET_POINT image there; show a FULL_SIZE image there, or check the ExternalImage's identifier")

        try await Self.seedImages(harness, [(Self.sandboxHero, "APPROVED", "FULL_SIZE")], in: .sandbox)
        #expect(try await uploadError() == "external image 'vendor-icon' \(Self.sandboxIcon) is not in Apple's sandbox image list, and retention-sync never uploads external content; check its identifier in the ExternalImage manifest")
        let apply = await harness.run(["apply", "--env", "sandbox", "--auto-approve"])
        #expect(apply.code != .success)
        #expect(harness.emulator.state(of: .sandbox).messages.isEmpty, "nothing uploaded")
        #expect(harness.emulator.state(of: .sandbox).images.count == 1, "nothing uploaded")
    }

    @Test("prune keeps a vendor's image; --prune-id deletes it, but never while a message of the manifests shows it")
    func pruneKeepsExternalImages() async throws {
        let harness = try CommandHarness()
        try Self.writeManifests(harness)
        // stay-calm shows only the hero; the icon is declared and unused; the stranger is nobody's.
        try harness.edit("manifests/messages.yaml", replacing: """
                bulletPoints:
                  - { text: Guided sessions, image: vendor-icon, altText: A breathing ring }

            """, with: "")
        try await Self.seedImages(harness, [(Self.sandboxHero, "APPROVED", "FULL_SIZE"), (Self.sandboxIcon, "APPROVED", "BULLET_POINT"),
                                            (Self.stranger, "APPROVED", "FULL_SIZE")], in: .sandbox)
        #expect(await harness.run(["apply", "--env", "sandbox", "--auto-approve"]).code == .success)

        let pruned = try await ExternalContentTests.planJSON(harness, ["--env", "sandbox", "--prune", "--prune-force"])
        #expect(Self.deletes(pruned) == [Self.stranger], "the unmanaged image goes, the external ones stay")
        let icon = try Self.inventory(pruned, Self.sandboxIcon)
        #expect(icon["label"] as? String == "external")
        #expect(icon["name"] as? String == "vendor-icon")
        #expect(icon["prune"] as? String == "kept: external (content unknown), deleted only when named with --prune-id")
        let hero = try Self.inventory(pruned, Self.sandboxHero)
        #expect(hero["used_by"] as? [String] == ["message stay-calm (en-US)"])
        #expect(hero["prune"] as? String == "kept: in use")
        let text = await harness.run(["plan", "--env", "sandbox", "--prune", "--prune-force"])
        #expect(text.stdout.contains("image \(Self.sandboxIcon) APPROVED: vendor-icon external (content unknown); kept: external (content unknown), deleted only when named with --prune-id"),
                "\(text.stdout)")

        let named = try await ExternalContentTests.planJSON(harness, ["--env", "sandbox", "--prune-id", "\(Self.sandboxIcon),\(Self.sandboxHero)", "--prune-force"])
        #expect(Self.deletes(named) == [Self.sandboxIcon, Self.stranger].sorted(), "the hero is in use even when named")
        let apply = await harness.run(["apply", "--env", "sandbox", "--prune-id", Self.sandboxIcon, "--prune-force", "--auto-approve"])
        #expect(apply.code == .success, "\(apply.stdout)\(apply.stderr)")
        let held = harness.emulator.state(of: .sandbox).images
        #expect(held[Self.sandboxIcon] == nil && held[Self.stranger] == nil)
        #expect(held[Self.sandboxHero] != nil)
        #expect(try Self.adopted(harness, .sandbox, Self.sandboxIcon)?["deleted_at"] != nil, "the state records the deletion")
    }

    @Test("a plain prune keeps an unmanaged image while an external message stays, since that message may show it")
    func pruneKeepsImagesAnExternalMessageMayShow() async throws {
        let harness = try CommandHarness()
        try ExternalContentTests.writeManifests(harness, defaultMessage: "stay-calm")
        let seeded = try await ExternalContentTests.seed(harness, """
            {"messages": [{"identifier": "\(ExternalContentTests.sandboxId)"}],
             "images": [{"identifier": "\(Self.stranger)", "size": "FULL_SIZE"}]}
            """, in: .sandbox)
        #expect(seeded.status == 200)
        let plan = try await ExternalContentTests.planJSON(harness, ["--env", "sandbox", "--prune", "--prune-force"])
        #expect(Self.deletes(plan) == [], "\(ExternalContentTests.actions(plan))")
        #expect(try Self.inventory(plan, Self.stranger)["prune"] as? String == "kept: 1 message of unknown content remain and may use it")

        // Once the external message is named for deletion, nothing of unknown content remains: both go, the message first.
        let named = try await ExternalContentTests.planJSON(harness, ["--env", "sandbox", "--prune-id", ExternalContentTests.sandboxId, "--prune-force"])
        #expect(Self.deletes(named) == [ExternalContentTests.sandboxId, Self.stranger].sorted())
    }

    @Test("replacing a vendor's picture step by step, as the manual lists it: the message shows a managed Image instead (a new version, held for review with its picture), then --prune-id deletes the earlier version and the vendor's image together")
    func replacingTheVendorsPicture() async throws {
        let harness = try CommandHarness()
        try Self.writeManifests(harness)
        try harness.edit("manifests/messages.yaml", replacing: """
                bulletPoints:
                  - { text: Guided sessions, image: vendor-icon, altText: A breathing ring }

            """, with: "")
        // 0. Adopted: stay-calm shows the vendor's picture and is the approved default.
        try await Self.seedImages(harness, [(Self.productionHero, "APPROVED", "FULL_SIZE")], in: .production)
        #expect(await harness.run(["apply", "--env", "production"]).code == .success)
        func held() -> EmulatorState { harness.emulator.state(of: .production) }
        let oldId = try #require(held().messages.keys.first)
        try harness.emulator.approveMessage(oldId, in: .production)
        #expect(await harness.run(["apply", "--env", "production"]).code == .success)
        #expect(held().defaults[Self.pair] == oldId)

        var ran: [(command: String, output: String)] = []
        var newId = "", newImageId = ""
        /// Runs a line of the manual as a person would, its placeholders filled in.
        func run(_ line: String) async throws -> CommandHarness.Run {
            let filled = line.replacingOccurrences(of: "$NEW_IMAGE_ID", with: newImageId).replacingOccurrences(of: "$NEW_ID", with: newId)
                .replacingOccurrences(of: "$OLD_ID", with: oldId).replacingOccurrences(of: "$IMAGE_ID", with: Self.productionHero)
            let result = try await ReplacingExternalContentTests.runManualLine(filled, in: harness)
            ran.append((line, result.stdout + result.stderr))
            #expect(result.code == .success, "\(line)\n\(result.stdout)\(result.stderr)")
            return result
        }

        // 1. The team's own picture: a new version of stay-calm, uploaded with it; the vendor's keeps serving.
        try Self.showOwnHero(harness)
        _ = try await run("retention-sync plan --env production")
        _ = try await run("retention-sync apply --env production")
        newId = try #require(held().messages.keys.first { $0 != oldId })
        newImageId = try #require(held().images.keys.first { $0 != Self.productionHero })
        #expect(held().messages[newId]?.body.image?.imageIdentifier == newImageId)
        #expect(held().defaults[Self.pair] == oldId, "the vendor's picture serves until review ends")

        // 2. App Review approves both: the default switches to the new version.
        _ = try await run(#"curl -X POST "$RETENTION_SYNC_ENDPOINT/production/emulator/messages/$NEW_ID/approve""#)
        _ = try await run(#"curl -X POST "$RETENTION_SYNC_ENDPOINT/production/emulator/images/$NEW_IMAGE_ID/approve""#)
        _ = try await run("retention-sync plan --env production")
        _ = try await run("retention-sync apply --env production")
        #expect(held().defaults[Self.pair] == newId)

        // 3. The earlier version (a rollback target) still shows the vendor's picture: named alone, the picture is kept.
        let kept = try await ExternalContentTests.planJSON(harness, ["--env", "production", "--prune-id", Self.productionHero])
        #expect(Self.deletes(kept) == [])
        #expect(try Self.inventory(kept, Self.productionHero)["used_by"] as? [String] == ["message stay-calm (en-US) \(oldId), an earlier version"])
        _ = try await run(#"retention-sync plan --env production --prune-id "$IMAGE_ID""#)
        _ = try await run(#"retention-sync apply --env production --prune-id "$OLD_ID,$IMAGE_ID" --prune-force"#)
        #expect(held().images[Self.productionHero] == nil && held().messages[oldId] == nil)
        #expect(held().defaults[Self.pair] == newId)
        #expect(try Self.adopted(harness, .production, Self.productionHero)?["deleted_at"] != nil)
        try FileManager.default.removeItem(at: harness.file("manifests/vendor-images.yaml"))
        _ = try await run("retention-sync plan --env production")

        // The manual lists exactly these lines, in this order, and each printed what the manual promises.
        let manual = try ReplacingExternalContentTests.manualSteps("replacing-external-image")
        #expect(ran.map(\.command) == manual.map(\.command))
        for ((command, output), (_, promise)) in zip(ran, manual) {
            guard let promise else { continue }
            #expect(output.contains(promise), "\(command) promised '\(promise)':\n\(output)")
        }
    }

    @Test("importing an app that holds a vendor's images writes an ExternalImage for each, which validates; the next plan says No changes with no upload; an image the tool uploaded itself is not imported")
    func importWritesExternalImages() async throws {
        let harness = try CommandHarness()
        try Self.writeManifests(harness)
        // The team's own first upload: an Image and a message that shows it, since removed from the manifests.
        for name in ["vendor-images.yaml", "defaults.yaml"] { try FileManager.default.removeItem(at: harness.file("manifests/\(name)")) }
        try Self.showOwnHero(harness)
        try harness.edit("manifests/messages.yaml", replacing: """
                bulletPoints:
                  - { text: Guided sessions, image: vendor-icon, altText: A breathing ring }

            """, with: "")
        // Without defaults.yaml the pair has no default: apply does its work and calls for attention to that.
        let own = await harness.run(["apply", "--env", "sandbox", "--auto-approve"])
        #expect(own.code == .needsAttention && own.stderr.contains("has no default message at Apple and none in the manifests"), "\(own.stderr)")
        let ownImage = try #require(harness.emulator.state(of: .sandbox).images.keys.first)
        for name in ["images.yaml", "messages.yaml"] { try FileManager.default.removeItem(at: harness.file("manifests/\(name)")) }
        try await Self.seedImages(harness, [(Self.sandboxHero, "PENDING", "FULL_SIZE"), (Self.sandboxIcon, "APPROVED", "BULLET_POINT")],
                                  in: .sandbox)

        let run = await harness.run(["import", "--env", "sandbox"])
        #expect(run.code == .success, "\(run.stdout)\(run.stderr)")
        #expect(run.stdout.contains("Wrote manifests/imported-sandbox.yaml: 0 external messages, 2 external images, 0 defaults."), "\(run.stdout)")
        let written = try String(contentsOf: harness.file("manifests/imported-sandbox.yaml"), encoding: .utf8)
        #expect(written.components(separatedBy: "kind: ExternalImage").count - 1 == 2, "\(written)")
        #expect(written.contains("""
            # Imported by 'retention-sync import --env sandbox': APPROVED at Apple, BULLET_POINT; its pixels are unknown.
            apiVersion: retention-sync/v1
            kind: ExternalImage
            name: imported-sandbox-image-1c2d3e4f
            identifiers:
              sandbox: \(Self.sandboxIcon)
            """), "\(written)")
        #expect(written.contains("# Imported by 'retention-sync import --env sandbox': PENDING at Apple, FULL_SIZE; its pixels are unknown."))
        #expect(written.contains("name: imported-sandbox-image-5e4d3c2b\nidentifiers:\n  sandbox: \(Self.sandboxHero)\n"), "\(written)")
        #expect(!written.contains(ownImage), "the state records that image as the tool's own upload")

        let validate = await harness.run(["validate"])
        #expect(validate.code == .success, "\(validate.stdout)\(validate.stderr)")
        #expect(!validate.stdout.contains(": error:"), "\(validate.stdout)")
        let before = harness.emulator.state(of: .sandbox)
        let plan = await harness.run(["plan", "--env", "sandbox"])
        #expect(plan.stdout.contains("No changes. sandbox matches the manifests."), "\(plan.stdout)")
        let json = try await ExternalContentTests.planJSON(harness, ["--env", "sandbox", "--prune"])
        #expect(try Self.inventory(json, Self.sandboxHero)["label"] as? String == "external")
        #expect(try Self.inventory(json, Self.sandboxIcon)["label"] as? String == "external")
        #expect(!Self.deletes(json).contains(Self.sandboxHero) && !Self.deletes(json).contains(Self.sandboxIcon), "a prune keeps what was imported")
        #expect(await harness.run(["apply", "--env", "sandbox"]).code == .needsAttention, "the pair still has no default")
        let after = harness.emulator.state(of: .sandbox)
        #expect(after.images == before.images && after.messages.count == before.messages.count, "nothing uploaded")
        #expect(try Self.adopted(harness, .sandbox, Self.sandboxIcon)?["name"] as? String == "imported-sandbox-image-1c2d3e4f")

        let again = await harness.run(["import", "--env", "sandbox"])
        #expect(again.stdout.contains("Nothing new to import"), "\(again.stdout)")
        #expect(try ImportCommandTests.files(harness) == ["imported-sandbox.yaml"])
    }
}
