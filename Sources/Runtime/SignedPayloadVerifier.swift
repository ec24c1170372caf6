public import Crypto
import Foundation
public import RetentionMessagingModels

/// Verifies the `signedPayload` Apple POSTs to the realtime URL: ES256 over a 3-certificate `x5c`
/// chain that leads to a root the operator supplies (Apple Root CA - G3 in production), with
/// Apple's leaf and intermediate extensions, then the App's `appAppleId` and environment.
public struct SignedPayloadVerifier: Sendable {
    /// Apple's marker on the certificate that signs App Store payloads.
    public static let leafExtensionOID = "1.2.840.113635.100.6.11.1"
    /// Apple's marker on the intermediate (Apple Worldwide Developer Relations) certificate.
    public static let intermediateExtensionOID = "1.2.840.113635.100.6.2.1"

    public let trustedRoots: [X509Certificate]
    public let appAppleId: Int64?
    public let environment: RetentionMessagingModels.Environment
    public let onlineChecks: Bool
    private let trustedRootDER: Set<[UInt8]>

    /// `appAppleId` nil skips that check (sandbox apps may not have one yet). `onlineChecks`
    /// verifies the chain at the current time instead of at the payload's `signedDate`;
    /// revocation is not checked either way, since this library makes no network calls.
    public init(trustedRoots: [X509Certificate], appAppleId: Int64?, environment: RetentionMessagingModels.Environment,
                onlineChecks: Bool = false) {
        self.trustedRoots = trustedRoots
        self.appAppleId = appAppleId
        self.environment = environment
        self.onlineChecks = onlineChecks
        trustedRootDER = Set(trustedRoots.map(\.der))
    }

    public func verify(signedPayload: String) throws(SignedPayloadError) -> DecodedRealtimeRequestBody {
        let jws: DecodedJWS
        do {
            jws = try JWS.decode(signedPayload.trimmingCharacters(in: .whitespacesAndNewlines))
        } catch {
            throw .malformed(error.description)
        }
        guard jws.header.alg == "ES256" else { throw .unsupportedAlgorithm(jws.header.alg) }
        guard let x5c = jws.header.x5c else { throw .malformed("the JWS header has no x5c certificate chain") }
        guard x5c.count == 3 else { throw .wrongCertificateCount(x5c.count) }
        var chain: [X509Certificate] = []
        for (index, encoded) in x5c.enumerated() {
            do {
                chain.append(try X509Certificate(base64DER: encoded))
            } catch {
                throw .malformed("x5c certificate \(index) is not a base64 DER certificate (\(error.description))")
            }
        }
        // The date to verify at comes from the payload before its signature is checked, as in Apple's
        // own libraries: a forged date cannot help, because the chain and signature must still verify.
        let payload: DecodedRealtimeRequestBody
        do {
            payload = try JSONDecoder().decode(DecodedRealtimeRequestBody.self, from: Data(jws.payloadJSON))
        } catch {
            throw .malformed("the payload is not a DecodedRealtimeRequestBody (\(error))")
        }
        let date = onlineChecks ? Date() : Date(timeIntervalSince1970: Double(payload.signedDate) / 1000)
        do {
            try X509Chain.verify(chain: chain, trustedRoots: trustedRoots, at: date, requiredExtensions: [
                (certificateIndex: 0, oid: Self.leafExtensionOID),
                (certificateIndex: 1, oid: Self.intermediateExtensionOID),
            ])
        } catch {
            switch error {
            case .emptyChain: throw .wrongCertificateCount(0)
            case .untrustedRoot(let reason), .invalidChain(let reason): throw .untrustedChain(reason)
            case .expired(let index): throw .certificateExpired(certificateIndex: index)
            case .missingExtension(let index, let oid): throw .missingExtension(certificateIndex: index, oid: oid)
            }
        }
        // OpenSSL completes the chain from the trusted store and ignores a third certificate it does
        // not need; Apple always sends its root there, so anything else is refused.
        guard trustedRootDER.contains(chain[2].der) else {
            throw .untrustedChain("x5c certificate 2 (\(chain[2].subject)) is not one of the supplied root certificates")
        }
        guard let key = chain[0].publicKey, jws.verify(with: key) else { throw .badSignature }
        if let appAppleId, payload.appAppleId != appAppleId {
            throw .wrongAppAppleId(expected: appAppleId, found: payload.appAppleId)
        }
        guard payload.environment == environment.appleName else {
            throw .wrongEnvironment(expected: environment.appleName, found: payload.environment)
        }
        return payload
    }
}
