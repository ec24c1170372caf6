import Crypto
import Foundation
import Testing

@Suite("Issuing an Apple-style signing chain")
struct AppleStyleSigningChainTests {
    @Test("a generated chain verifies up to its root with Apple's two OIDs, and its JWS verifies with the leaf")
    func generatedChainVerifies() throws {
        let chain = try AppleStyleSigningChain()
        try X509Chain.verify(chain: [chain.leaf, chain.intermediate, chain.root], trustedRoots: [chain.root], at: Date(),
                             requiredExtensions: [(0, AppleStyleSigningChain.leafOID), (1, AppleStyleSigningChain.intermediateOID)])
        #expect(chain.intermediate.issuer == chain.root.subject)
        #expect(!chain.root.hasExtension(oid: AppleStyleSigningChain.leafOID))
        let signed = try chain.sign(payloadJSON: Array(#"{"a":1}"#.utf8))
        let decoded = try JWS.decode(signed)
        #expect(decoded.header.x5c == chain.x5c)
        #expect(decoded.verify(with: try #require(chain.leaf.publicKey)))
        // The PEM form reads back as the same certificate.
        #expect(try X509Certificate.loadPEM(chain.root.pem).first?.der == chain.root.der)
    }

    @Test("a chain is not trusted under another chain's root, and not outside its validity window")
    func otherRootAndValidity() throws {
        let chain = try AppleStyleSigningChain()
        let other = try AppleStyleSigningChain()
        #expect(throws: X509VerificationError.self) {
            try X509Chain.verify(chain: [chain.leaf, chain.intermediate], trustedRoots: [other.root], at: Date(), requiredExtensions: [])
        }
        #expect(throws: X509VerificationError.expired(certificateIndex: 0)) {
            try X509Chain.verify(chain: [chain.leaf, chain.intermediate], trustedRoots: [chain.root],
                                 at: Date(timeIntervalSinceNow: 400 * 86_400), requiredExtensions: [])
        }
    }
}
