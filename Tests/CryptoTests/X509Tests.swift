import Crypto
import Foundation
import Testing

@Suite("X.509 certificates and chains")
struct X509Tests {
    static let leafOID = "1.2.840.113635.100.6.11.1"
    static let intermediateOID = "1.2.840.113635.100.6.2.1"
    static let appleRequirements: [(certificateIndex: Int, oid: String)] = [(0, leafOID), (1, intermediateOID)]
    static let validDate = Date(timeIntervalSince1970: 1_800_000_000) // 2027-01-15

    func load(_ name: String) throws -> [X509Certificate] {
        try X509Certificate.load(contentsOfFile: Fixtures.path(name))
    }

    /// The error `body` throws, or nil when it succeeds.
    func failure(_ body: () throws(X509VerificationError) -> Void) -> X509VerificationError? {
        do {
            try body()
            return nil
        } catch {
            return error
        }
    }

    @Test("a PEM file with three certificates loads all three, with subjects, issuers and dates")
    func loadsChainPEM() throws {
        let chain = try load("chain.pem")
        #expect(chain.count == 3)
        #expect(chain[0].subject == "O=retention-sync tests,CN=Test Signing Leaf")
        #expect(chain[0].issuer == "O=retention-sync tests,CN=Test Intermediate CA")
        #expect(chain[2].subject == chain[2].issuer)
        #expect(chain[0].notBefore == ISO8601DateFormatter().date(from: "2020-01-01T00:00:00Z"))
        #expect(chain[0].notAfter == ISO8601DateFormatter().date(from: "2045-01-01T00:00:00Z"))
    }

    @Test("a DER certificate loads and matches its PEM form, and DER round-trips")
    func loadsDER() throws {
        let der = try #require(try load("leaf.der").first)
        let pem = try #require(try load("leaf.pem").first)
        #expect(der.der == pem.der)
        #expect(try X509Certificate(der: pem.der).subject == pem.subject)
        #expect(Base64.decode(Base64.encode(pem.der)) == pem.der)
    }

    @Test("a certificate from an x5c entry (standard base64 DER) matches the PEM it came from")
    func loadsX5CEntry() throws {
        let pem = try #require(try load("leaf.pem").first)
        #expect(try X509Certificate(base64DER: Base64.encode(pem.der)).der == pem.der)
        #expect(throws: CryptoError.self) { try X509Certificate(base64DER: "not base64!") }
    }

    @Test("garbage is not a certificate")
    func garbageRefused() {
        #expect(throws: CryptoError.self) { try X509Certificate(der: [1, 2, 3]) }
        #expect(throws: CryptoError.self) { try X509Certificate.loadPEM("hello") }
    }

    @Test("extensions are found by dotted OID, and absent ones are not")
    func extensionsByOID() throws {
        let chain = try load("chain.pem")
        #expect(chain[0].hasExtension(oid: Self.leafOID))
        #expect(!chain[0].hasExtension(oid: Self.intermediateOID))
        #expect(chain[1].hasExtension(oid: Self.intermediateOID))
        #expect(chain[0].hasExtension(oid: "2.5.29.15"))
        #expect(!chain[0].hasExtension(oid: "not an oid"))
    }

    @Test("the leaf's public key is an ES256 key")
    func leafKey() throws {
        #expect(try load("leaf.pem")[0].publicKey != nil)
    }

    @Test("a good chain verifies against its root with Apple's required OIDs")
    func goodChainVerifies() throws {
        let chain = try load("chain.pem")
        try X509Chain.verify(chain: Array(chain.prefix(2)), trustedRoots: try load("root.pem"), at: Self.validDate,
                             requiredExtensions: Self.appleRequirements)
        // A chain that also carries the root, as Apple's x5c does, verifies too.
        try X509Chain.verify(chain: chain, trustedRoots: try load("root.pem"), at: Self.validDate,
                             requiredExtensions: Self.appleRequirements)
    }

    @Test("a chain without its intermediate is refused because the leaf's issuer cannot be found")
    func missingIntermediateRefused() throws {
        let leaf = try load("leaf.pem"), roots = try load("root.pem")
        let error = failure { () throws(X509VerificationError) in
            try X509Chain.verify(chain: leaf, trustedRoots: roots, at: Self.validDate, requiredExtensions: [])
        }
        guard case .untrustedRoot(let reason) = error else {
            Issue.record("expected untrustedRoot, got \(String(describing: error))")
            return
        }
        #expect(reason.contains("unable to get local issuer certificate"))
        #expect(reason.contains("Test Signing Leaf"))
    }

    @Test("an intermediate without Apple's OID is refused, naming the OID and its position")
    func missingOIDRefused() throws {
        let chain = try load("leaf-under-intermediate-without-oid.pem") + load("intermediate-without-oid.pem")
        #expect(throws: X509VerificationError.missingExtension(certificateIndex: 1, oid: Self.intermediateOID)) {
            try X509Chain.verify(chain: chain, trustedRoots: try load("root.pem"), at: Self.validDate,
                                 requiredExtensions: Self.appleRequirements)
        }
    }

    @Test("a date before or after the validity window is refused as expired")
    func outsideValidityRefused() throws {
        let chain = try load("chain.pem")
        for date in [Date(timeIntervalSince1970: 1_500_000_000), Date(timeIntervalSince1970: 2_500_000_000)] {
            #expect(throws: X509VerificationError.expired(certificateIndex: 0)) {
                try X509Chain.verify(chain: chain, trustedRoots: try load("root.pem"), at: date, requiredExtensions: [])
            }
        }
    }

    @Test("a chain to a root the caller does not trust is refused")
    func untrustedRootRefused() throws {
        let chain = try load("chain-to-untrusted-root.pem")
        #expect(chain.count == 2)
        let roots = try load("root.pem")
        let error = failure { () throws(X509VerificationError) in
            try X509Chain.verify(chain: chain, trustedRoots: roots, at: Self.validDate, requiredExtensions: [])
        }
        guard case .untrustedRoot = error else {
            Issue.record("expected untrustedRoot, got \(String(describing: error))")
            return
        }
        // A self-signed root presented as if it were the chain is not trusted either.
        #expect(throws: X509VerificationError.self) {
            try X509Chain.verify(chain: try load("untrusted-root.pem"), trustedRoots: try load("root.pem"),
                                 at: Self.validDate, requiredExtensions: [])
        }
    }

    @Test("Apple's leaf OID marked critical is refused as an extension OpenSSL does not handle")
    func criticalCustomExtensionRefused() throws {
        let chain = try load("leaf-with-critical-oid.pem") + load("intermediate.pem")
        let roots = try load("root.pem")
        let error = failure { () throws(X509VerificationError) in
            try X509Chain.verify(chain: chain, trustedRoots: roots, at: Self.validDate, requiredExtensions: Self.appleRequirements)
        }
        guard case .invalidChain(let reason) = error else {
            Issue.record("expected invalidChain, got \(String(describing: error))")
            return
        }
        #expect(reason.contains("unhandled critical extension"))
    }

    @Test("an empty chain is refused")
    func emptyChainRefused() throws {
        #expect(throws: X509VerificationError.emptyChain) {
            try X509Chain.verify(chain: [], trustedRoots: try load("root.pem"), at: Self.validDate, requiredExtensions: [])
        }
    }
}
