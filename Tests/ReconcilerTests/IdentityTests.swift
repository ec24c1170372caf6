import Crypto
import Foundation
import Manifests
import Reconciler
import RetentionMessaging
import RetentionMessagingModels
import Testing

@Suite("Identities")
struct IdentityTests {
    let directory = URL(fileURLWithPath: "/tmp/app")

    @Test("an image identifier is the UUIDv5 of the documented name string")
    func imageIdentifierIsRecomputable() throws {
        let desired = try Identities.derive(Fixtures.manifests(directory: directory), environment: .production)
        let hero = try #require(desired.images.first { $0.name == "hero" })
        let name = "com.example.app:production:image:FULL_SIZE:" + Digest.sha256Hex(Fixtures.heroPNG)
        #expect(hero.identifier == (try UUIDv5.make(namespace: "3d4bd7a5-9c3e-4a55-8f0e-2b6f6b1c9e71", name: name)))
    }

    @Test("a message identifier is the UUIDv5 of bundle, environment, scope, locale, purpose and content version")
    func messageIdentifierIsRecomputable() throws {
        let desired = try Identities.derive(Fixtures.manifests(directory: directory), environment: .sandbox)
        let offer = try #require(desired.messages.first { $0.name == "offer" && $0.locale == "de-DE" })
        let version = String(Digest.sha256Hex(Array(try CanonicalJSON.encode(offer.body))).prefix(16))
        #expect(offer.contentVersion == version)
        let name = "com.example.app:sandbox:monthly:de-DE:offer:\(version)"
        #expect(offer.identifier == (try UUIDv5.make(namespace: Identities.namespace, name: name)))
    }

    @Test("changing a picture gives every message that shows it a new identifier")
    func changedPictureGivesNewMessageIdentifiers() throws {
        let before = try Identities.derive(Fixtures.manifests(directory: directory), environment: .sandbox)
        let after = try Identities.derive(Fixtures.manifests(directory: directory, heroPNG: Array("hero-png-v2".utf8)), environment: .sandbox)
        let changed = Set(before.messages.map(\.identifier)).subtracting(after.messages.map(\.identifier))
        #expect(changed == Set(before.messages.filter { $0.name == "standard" }.map(\.identifier)))
    }

    @Test("the same content has different identifiers in sandbox and production")
    func environmentsHaveTheirOwnIdentifiers() throws {
        let sandbox = try Identities.derive(Fixtures.manifests(directory: directory), environment: .sandbox)
        let production = try Identities.derive(Fixtures.manifests(directory: directory), environment: .production)
        #expect(Set(sandbox.messages.map(\.identifier)).isDisjoint(with: production.messages.map(\.identifier)))
    }

    @Test("an App's identity namespace replaces the project's")
    func namespaceOverride() throws {
        var manifests = Fixtures.manifests(directory: directory)
        let standard = try Identities.derive(manifests, environment: .sandbox)
        manifests.app.identityNamespace = UUIDv5.dnsNamespace
        let overridden = try Identities.derive(manifests, environment: .sandbox)
        #expect(overridden.identityNamespace == UUIDv5.dnsNamespace)
        #expect(Set(standard.messages.map(\.identifier)).isDisjoint(with: overridden.messages.map(\.identifier)))
    }

    @Test("a message body holds image identifiers, not image names")
    func bodiesReferenceImageIdentifiers() throws {
        let desired = try Identities.derive(Fixtures.manifests(directory: directory), environment: .sandbox)
        let standard = try #require(desired.messages.first { $0.name == "standard" })
        let ids = Set(desired.images.map(\.identifier))
        #expect(!standard.imageIdentifiers.isEmpty)
        #expect(standard.imageIdentifiers.allSatisfy(ids.contains))
        #expect(standard.body.headerPosition == .aboveImage)
    }

    @Test("a name that resolves to nothing is the validator's finding, worded and placed as validate reports it")
    func unresolvedNamesComeFromTheValidator() throws {
        var manifests = Fixtures.manifests(directory: directory)
        manifests.images = manifests.images.filter { $0.name != "hero" }
        let check = ManifestValidator.check(manifests)
        let reported = try #require(check.diagnostics.first { $0.code == "unknown-image" })
        let error = #expect(throws: ReconcilerError.self) { try Identities.derive(manifests, environment: .sandbox) }
        guard case .manifest(let location, let message) = error else { Issue.record("\(String(describing: error))"); return }
        #expect(message == "no image named 'hero'")
        #expect(location == reported.location)
    }

    @Test("validated manifests derive the same identifiers as the set they were resolved from")
    func validatedManifestsDerive() throws {
        let manifests = Fixtures.manifests(directory: directory)
        let validated = try ManifestValidator.check(manifests).validated.get()
        #expect(try Identities.derive(validated, environment: .production) == Identities.derive(manifests, environment: .production))
        let offer = try #require(validated.rules.first)
        #expect(offer.id == "\(manifests.flows[0].name)/\(manifests.flows[0].rules[0].name)")
        guard case .message(let message)? = offer.shows else {
            Issue.record("the fixture's first rule names a managed message, not \(String(describing: offer.shows))")
            return
        }
        #expect(message.name == manifests.flows[0].rules[0].response.messageName)
    }

    @Test("the manifests fingerprint does not depend on where the repository is checked out")
    func fingerprintIgnoresCheckoutPath() throws {
        let here = try Identities.derive(Fixtures.manifests(directory: directory), environment: .production)
        let elsewhere = try Identities.derive(Fixtures.manifests(directory: URL(fileURLWithPath: "/builds/ci/job-42/app")),
                                              environment: .production)
        #expect(try here.fingerprint() == elsewhere.fingerprint())
    }
}
