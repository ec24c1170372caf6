/// Why Apple's `signedPayload` was refused. Each reason is its own case, so a server can count
/// them, and the text says what to check.
public enum SignedPayloadError: Error, Sendable, Equatable, CustomStringConvertible {
    case malformed(String)
    case unsupportedAlgorithm(String)
    case wrongCertificateCount(Int)
    case untrustedChain(String)
    case certificateExpired(certificateIndex: Int)
    case missingExtension(certificateIndex: Int, oid: String)
    case badSignature
    case wrongAppAppleId(expected: Int64, found: Int64)
    case wrongEnvironment(expected: String, found: String)
    /// A notification for another App (its `bundleId`).
    case wrongBundleId(expected: String, found: String)
    /// `Xcode` or `LocalTesting`: payloads Apple's libraries do not verify, so no server answers them.
    case unsupportedEnvironment(String)
    /// `signedDate` lies further from now than the freshness window allows (a replayed payload).
    case stale(ageSeconds: Int, maxAgeSeconds: Int)

    /// A short, stable name for metrics and logs.
    public var reason: String {
        switch self {
        case .malformed: "malformed"
        case .unsupportedAlgorithm: "wrong_alg"
        case .wrongCertificateCount: "wrong_certificate_count"
        case .untrustedChain: "untrusted_chain"
        case .certificateExpired: "certificate_expired"
        case .missingExtension: "missing_extension"
        case .badSignature: "bad_signature"
        case .wrongAppAppleId: "wrong_app"
        case .wrongEnvironment: "wrong_environment"
        case .wrongBundleId: "wrong_app"
        case .unsupportedEnvironment: "unsupported_environment"
        case .stale: "stale"
        }
    }

    public var description: String {
        switch self {
        case .malformed(let reason):
            "the signed payload is malformed: \(reason)"
        case .unsupportedAlgorithm(let alg):
            "the signed payload uses alg '\(alg)'; Apple signs with ES256 and nothing else is accepted"
        case .wrongCertificateCount(let count):
            "the signed payload's x5c holds \(count) certificate\(count == 1 ? "" : "s"); Apple sends exactly 3 "
                + "(leaf, intermediate, root)"
        case .untrustedChain(let reason):
            "the signed payload's certificates do not chain to a trusted root (supply Apple Root CA - G3): \(reason)"
        case .certificateExpired(let index):
            "certificate \(index) (0 = leaf) of the signed payload was not valid at its signedDate"
        case .missingExtension(let index, let oid):
            "certificate \(index) (0 = leaf) of the signed payload lacks Apple's extension \(oid)"
        case .badSignature:
            "the signed payload's signature does not verify with its leaf certificate's key"
        case .wrongAppAppleId(let expected, let found):
            "the signed payload is for appAppleId \(found), not this App's \(expected); do not answer it"
        case .wrongEnvironment(let expected, let found):
            "the signed payload is for environment \(found), not \(expected); do not answer it"
        case .wrongBundleId(let expected, let found):
            "the signed payload is for bundle id \(found), not this App's \(expected); do not record it"
        case .unsupportedEnvironment(let name):
            "the signed payload is for environment \(name), which Apple never sends to a server; do not answer it"
        case .stale(let age, let maxAge):
            "the signed payload's signedDate is \(age) s from now, outside the \(maxAge) s freshness window; "
                + "check the server's clock, or raise --max-age"
        }
    }
}
