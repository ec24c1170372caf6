import Basics
import Crypto
import Foundation
import RetentionMessagingModels
import Runtime
import Testing

/// Apple-style signed payloads made at test time with the PKI in `fixtures/runtime/`
/// (see `make-fixtures.sh`).
struct TestPKI {
    let root: X509Certificate
    let otherRoot: X509Certificate
    let intermediate: X509Certificate
    let intermediateWithoutOID: X509Certificate
    let leaf: X509Certificate
    let expiredLeaf: X509Certificate
    let leafKey: ES256PrivateKey

    init() throws {
        func certificate(_ name: String) throws -> X509Certificate {
            try #require(try X509Certificate.load(contentsOfFile: RuntimeFixtures.url(name).path).first)
        }
        root = try certificate("root.pem")
        otherRoot = try certificate("other-root.pem")
        intermediate = try certificate("intermediate.pem")
        intermediateWithoutOID = try certificate("intermediate-without-oid.pem")
        leaf = try certificate("leaf.pem")
        expiredLeaf = try certificate("leaf-expired.pem")
        leafKey = try ES256PrivateKey(contentsOfFile: RuntimeFixtures.url("leaf.key").path)
    }

    var chain: [X509Certificate] { [leaf, intermediate, root] }

    func payload(_ body: DecodedRealtimeRequestBody) throws -> [UInt8] { Array(try CanonicalJSON.encode(body)) }

    func sign(_ body: DecodedRealtimeRequestBody, alg: String = "ES256", chain: [X509Certificate]? = nil) throws -> String {
        let header = JWSHeader(alg: alg, x5c: (chain ?? self.chain).map { Base64.encode($0.der) })
        return try JWS.sign(headerJSON: Array(try CanonicalJSON.encode(header)), payloadJSON: payload(body), key: leafKey)
    }
}

@Suite("Apple's signed payload")
struct SignedPayloadVerifierTests {
    let pki: TestPKI
    let verifier: SignedPayloadVerifier
    let body = request(product: monthly, locale: "de-DE", signedDate: "2026-06-01T12:00:00Z")

    init() throws {
        pki = try TestPKI()
        verifier = SignedPayloadVerifier(trustedRoots: [pki.root], appAppleId: appAppleId, environment: .production, clock: SystemClock())
    }

    @Test("a payload signed by Apple's chain verifies and decodes")
    func correctPayloadVerifies() throws {
        #expect(try verifier.verify(signedPayload: pki.sign(body)) == body)
    }

    @Test("a payload signed with another algorithm is refused")
    func wrongAlgorithm() throws {
        let signed = try pki.sign(body, alg: "ES384")
        #expect(throws: SignedPayloadError.unsupportedAlgorithm("ES384")) { try verifier.verify(signedPayload: signed) }
    }

    @Test("a payload with two certificates is refused")
    func twoCertificates() throws {
        let signed = try pki.sign(body, chain: [pki.leaf, pki.intermediate])
        #expect(throws: SignedPayloadError.wrongCertificateCount(2)) { try verifier.verify(signedPayload: signed) }
    }

    @Test("a chain that leads to a root the operator did not supply is refused")
    func untrustedRoot() throws {
        let strict = SignedPayloadVerifier(trustedRoots: [pki.otherRoot], appAppleId: appAppleId, environment: .production, clock: SystemClock())
        let signed = try pki.sign(body)
        #expect { try strict.verify(signedPayload: signed) } throws: { error in
            guard case SignedPayloadError.untrustedChain = error else { return false }
            return true
        }
        let forged = try pki.sign(body, chain: [pki.leaf, pki.intermediate, pki.otherRoot])
        #expect { try verifier.verify(signedPayload: forged) } throws: { error in
            guard case SignedPayloadError.untrustedChain = error else { return false }
            return true
        }
    }

    @Test("an intermediate without Apple's OID is refused")
    func missingIntermediateOID() throws {
        let signed = try pki.sign(body, chain: [pki.leaf, pki.intermediateWithoutOID, pki.root])
        #expect(throws: SignedPayloadError.missingExtension(certificateIndex: 1, oid: "1.2.840.113635.100.6.2.1")) {
            try verifier.verify(signedPayload: signed)
        }
    }

    @Test("a leaf without Apple's OID is refused (the intermediate in the leaf's place)")
    func missingLeafOID() throws {
        // The root signs intermediates only, so a 3-certificate chain whose first certificate lacks
        // the leaf OID is the intermediate itself, followed by the root twice.
        let signed = try pki.sign(body, chain: [pki.intermediate, pki.root, pki.root])
        #expect { try verifier.verify(signedPayload: signed) } throws: { error in
            guard case SignedPayloadError.missingExtension(certificateIndex: 0, oid: "1.2.840.113635.100.6.11.1") = error else {
                return false
            }
            return true
        }
    }

    @Test("a signature over different bytes is refused")
    func signatureOverDifferentBytes() throws {
        let signed = try pki.sign(body)
        var other = body
        other.productId = yearly
        let parts = signed.split(separator: ".")
        let tampered = "\(parts[0]).\(Base64URL.encode(try pki.payload(other))).\(parts[2])"
        #expect(throws: SignedPayloadError.badSignature) { try verifier.verify(signedPayload: tampered) }
    }

    @Test("a leaf that had expired at signedDate is refused")
    func expiredAtSignedDate() throws {
        let signed = try pki.sign(body, chain: [pki.expiredLeaf, pki.intermediate, pki.root])
        #expect(throws: SignedPayloadError.certificateExpired(certificateIndex: 0)) { try verifier.verify(signedPayload: signed) }
        // The same chain verifies for a payload signed while the leaf was valid.
        var old = body
        old.signedDate = ms("2020-06-01T00:00:00Z")
        let signedThen = try pki.sign(old, chain: [pki.expiredLeaf, pki.intermediate, pki.root])
        #expect(try verifier.verify(signedPayload: signedThen) == old)
    }

    @Test("another app's payload is refused")
    func wrongAppAppleId() throws {
        var other = body
        other.appAppleId = 987_654_321
        let signed = try pki.sign(other)
        #expect(throws: SignedPayloadError.wrongAppAppleId(expected: appAppleId, found: 987_654_321)) {
            try verifier.verify(signedPayload: signed)
        }
    }

    @Test("a Sandbox payload sent to a production server is refused")
    func wrongEnvironment() throws {
        var sandbox = body
        sandbox.environment = "Sandbox"
        let signed = try pki.sign(sandbox)
        #expect(throws: SignedPayloadError.wrongEnvironment(expected: "Production", found: "Sandbox")) {
            try verifier.verify(signedPayload: signed)
        }
    }

    @Test("text that is not a JWS is malformed")
    func notAJWS() {
        #expect { try verifier.verify(signedPayload: "hello") } throws: { error in
            guard case SignedPayloadError.malformed = error else { return false }
            return true
        }
    }

    @Test("a Sandbox payload without appAppleId verifies on a sandbox server, as in Apple's libraries")
    func sandboxWithoutAppAppleId() throws {
        let sandbox = SignedPayloadVerifier(trustedRoots: [pki.root], appAppleId: appAppleId, environment: .sandbox, clock: SystemClock())
        let json = #"{"environment":"Sandbox","originalTransactionId":"2000000000000001","productId":"com.example.monthly","# +
            #""requestIdentifier":"6f1e4b9e-8a43-4c8e-9a59-0d3c1b7f6a10","signedDate":1780315200000,"userLocale":"en-US"}"#
        let header = JWSHeader(alg: "ES256", x5c: pki.chain.map { Base64.encode($0.der) })
        let signed = try JWS.sign(headerJSON: Array(try CanonicalJSON.encode(header)), payloadJSON: Array(json.utf8), key: pki.leafKey)
        let decoded = try sandbox.verify(signedPayload: signed)
        #expect(decoded.environment == "Sandbox")
        #expect(decoded.productId == monthly)
        // appAppleId is only compared in Production, so another app's id passes in Sandbox too.
        var other = body
        other.environment = "Sandbox"
        other.appAppleId = 987_654_321
        #expect(try sandbox.verify(signedPayload: pki.sign(other)).appAppleId == 987_654_321)
    }

    @Test("Xcode and LocalTesting payloads are refused, though Apple's libraries skip verifying them")
    func xcodeAndLocalTesting() throws {
        for environment in ["Xcode", "LocalTesting"] {
            var local = body
            local.environment = environment
            let signed = try pki.sign(local)
            #expect(throws: SignedPayloadError.unsupportedEnvironment(environment)) { try verifier.verify(signedPayload: signed) }
        }
    }

    @Test("a payload signed longer ago than --max-age, or too far ahead, is refused as stale")
    func freshnessWindow() throws {
        let signedAt = Date(timeIntervalSince1970: Double(body.signedDate) / 1000)
        func verifier(now: Date) -> SignedPayloadVerifier {
            SignedPayloadVerifier(trustedRoots: [pki.root], appAppleId: appAppleId, environment: .production,
                                  maxAge: 300, clock: VirtualClock(at: now))
        }
        let signed = try pki.sign(body)
        #expect(try verifier(now: signedAt.addingTimeInterval(299)).verify(signedPayload: signed) == body)
        #expect(throws: SignedPayloadError.stale(ageSeconds: 301, maxAgeSeconds: 300)) {
            try verifier(now: signedAt.addingTimeInterval(301)).verify(signedPayload: signed)
        }
        #expect(throws: SignedPayloadError.stale(ageSeconds: -400, maxAgeSeconds: 300)) {
            try verifier(now: signedAt.addingTimeInterval(-400)).verify(signedPayload: signed)
        }
    }

    @Test("a chain verified once is not verified again for the next payload")
    func chainCache() throws {
        _ = try verifier.verify(signedPayload: pki.sign(body))
        #expect(verifier.chainCacheHits == 0)
        var next = body
        next.requestIdentifier = "0d3c1b7f-6a10-4c8e-9a59-6f1e4b9e8a43"
        #expect(try verifier.verify(signedPayload: pki.sign(next)) == next)
        #expect(verifier.chainCacheHits == 1)
        // The cache never replaces the signature check.
        let parts = try pki.sign(next).split(separator: ".")
        let tampered = "\(parts[0]).\(Base64URL.encode(try pki.payload(body))).\(parts[2])"
        #expect(throws: SignedPayloadError.badSignature) { try verifier.verify(signedPayload: tampered) }
    }

    @Test("forged payloads never give the leaf key a table, and are refused with the table as without it")
    func forgedPayloadsBuildNoTable() throws {
        let tables = ES256KeyTables(buildAfter: 2)
        let verifier = SignedPayloadVerifier(trustedRoots: [pki.root], appAppleId: appAppleId, environment: .production, clock: SystemClock(),
                                             keyTables: tables)
        let header = Array(try CanonicalJSON.encode(JWSHeader(alg: "ES256", x5c: pki.chain.map { Base64.encode($0.der) })))
        // Apple's real chain in the header (anyone can copy it), signed by another key.
        let forged = try JWS.sign(headerJSON: header, payloadJSON: pki.payload(body), key: .generate())
        // A chain of the forger's own, under a root the server does not trust.
        let own = try AppleStyleSigningChain()
        let ownChain = Array(try CanonicalJSON.encode(JWSHeader(alg: "ES256", x5c: own.x5c)))
        let selfSigned = try JWS.sign(headerJSON: ownChain, payloadJSON: pki.payload(body), key: own.leafKey)
        for _ in 0..<20 {
            #expect(throws: SignedPayloadError.badSignature) { try verifier.verify(signedPayload: forged) }
            #expect(throws: SignedPayloadError.self) { try verifier.verify(signedPayload: selfSigned) }
        }
        #expect(tables.tableCount == 0)
        #expect(try verifier.verify(signedPayload: pki.sign(body)) == body)
        #expect(tables.tableCount == 0)
        #expect(try verifier.verify(signedPayload: pki.sign(body)) == body)
        #expect(tables.tableCount == 1)
        #expect(throws: SignedPayloadError.badSignature) { try verifier.verify(signedPayload: forged) }
        let parts = try pki.sign(body).split(separator: ".")
        var other = body
        other.productId = yearly
        let tampered = "\(parts[0]).\(Base64URL.encode(try pki.payload(other))).\(parts[2])"
        #expect(throws: SignedPayloadError.badSignature) { try verifier.verify(signedPayload: tampered) }
        #expect(try verifier.verify(signedPayload: pki.sign(body)) == body)
        #expect(tables.tableVerificationCount == 3)
        #expect(tables.tableCount == 1)
    }

    @Test("a cached chain is still refused at a signedDate where its leaf had expired")
    func chainCacheHonoursValidity() throws {
        var old = body
        old.signedDate = ms("2020-06-01T00:00:00Z")
        let expiredChain = [pki.expiredLeaf, pki.intermediate, pki.root]
        #expect(try verifier.verify(signedPayload: pki.sign(old, chain: expiredChain)) == old)
        #expect(throws: SignedPayloadError.certificateExpired(certificateIndex: 0)) {
            try verifier.verify(signedPayload: pki.sign(body, chain: expiredChain))
        }
    }
}
