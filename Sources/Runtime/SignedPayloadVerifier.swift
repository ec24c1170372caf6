public import Basics
public import Crypto
public import Foundation
public import RetentionMessagingModels
import Synchronization

/// Verifies the `signedPayload` Apple POSTs to the realtime URL: ES256 over a 3-certificate `x5c`
/// chain that leads to a root the operator supplies (Apple Root CA - G3 in production), with
/// Apple's leaf and intermediate extensions, then the environment, the App's `appAppleId` (in
/// Production) and, when asked, how fresh `signedDate` is.
public struct SignedPayloadVerifier: Sendable {
    /// Apple's marker on the certificate that signs App Store payloads.
    public static let leafExtensionOID = "1.2.840.113635.100.6.11.1"
    /// Apple's marker on the intermediate (Apple Worldwide Developer Relations) certificate.
    public static let intermediateExtensionOID = "1.2.840.113635.100.6.2.1"
    /// How long a verified chain is trusted without verifying it again, as in Apple's libraries.
    public static let chainCacheLifetime: TimeInterval = 15 * 60
    /// How many verified chains are kept; Apple rotates its leaf rarely, so a few suffice.
    public static let chainCacheCapacity = 16

    public let trustedRoots: [X509Certificate]
    public let appAppleId: Int64?
    public let environment: RetentionMessagingModels.Environment
    public let onlineChecks: Bool
    /// The oldest (and furthest in the future) a `signedDate` may be; nil accepts any date, as
    /// Apple's libraries do, which lets a captured payload be replayed forever.
    public let maxAge: TimeInterval?
    private let clock: any RetentionClock
    private let trustedRootDER: Set<[UInt8]>
    private let chainCache: VerifiedChainCache
    private let keyTables: ES256KeyTables

    /// `appAppleId` is compared only for Production, as in Apple's libraries (a Sandbox payload may
    /// lack it); nil skips it there too. `onlineChecks` verifies the chain at the current time
    /// instead of at the payload's `signedDate`; revocation is not checked either way, since this
    /// library makes no network calls. `now` is the clock for `maxAge` and the chain cache.
    /// `keyTables` speeds up the signature check for leaf keys that sign many payloads.
    public init(trustedRoots: [X509Certificate], appAppleId: Int64?, environment: RetentionMessagingModels.Environment,
                onlineChecks: Bool = false, maxAge: TimeInterval? = nil,
                clock: any RetentionClock, keyTables: ES256KeyTables = ES256KeyTables()) {
        self.trustedRoots = trustedRoots
        self.appAppleId = appAppleId
        self.environment = environment
        self.onlineChecks = onlineChecks
        self.maxAge = maxAge
        self.clock = clock
        trustedRootDER = Set(trustedRoots.map(\.der))
        chainCache = VerifiedChainCache()
        self.keyTables = keyTables
    }

    private static func trimmed(_ text: String) -> String {
        let edges = [text.utf8.first, text.utf8.last].compactMap { $0 }
        guard edges.contains(where: { $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }) else { return text }
        return text.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// How many chain verifications were answered from the cache (for metrics and tests).
    public var chainCacheHits: Int { chainCache.hits }

    public func verify(signedPayload: String) throws(SignedPayloadError) -> DecodedRealtimeRequestBody {
        try verify(compact: Array(Self.trimmed(signedPayload).utf8)[...])
    }

    /// The same over the bytes of a compact JWS as they sit in a request body, without making a
    /// String of them first; bytes with whitespace at either end take the String path, which trims it.
    public func verify(compactJWS bytes: ArraySlice<UInt8>) throws(SignedPayloadError) -> DecodedRealtimeRequestBody {
        if let edge = bytes.first, Self.isWhitespace(edge) || Self.isWhitespace(bytes.last!) {
            return try verify(signedPayload: String(decoding: bytes, as: UTF8.self))
        }
        return try verify(compact: bytes)
    }

    private static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }

    private func verify(compact: ArraySlice<UInt8>) throws(SignedPayloadError) -> DecodedRealtimeRequestBody {
        var wire: WirePayload?
        _ = try verifiedPayload(compact: compact) { json throws(SignedPayloadError) in
            let decoded = try WirePayload.decode(json)
            wire = decoded
            return decoded.signedDate
        }
        let current = clock.time()
        guard let wire else { throw .malformed("the payload is not a DecodedRealtimeRequestBody") }
        // Apple's libraries skip verification for these; a server must never answer them.
        guard wire.environment != "Xcode", wire.environment != "LocalTesting" else {
            throw .unsupportedEnvironment(wire.environment)
        }
        guard wire.environment == environment.appleName else {
            throw .wrongEnvironment(expected: environment.appleName, found: wire.environment)
        }
        if environment == .production, let appAppleId {
            guard let found = wire.appAppleId else { throw .malformed("the Production payload has no appAppleId") }
            guard found == appAppleId else { throw .wrongAppAppleId(expected: appAppleId, found: found) }
        }
        if let maxAge {
            let age = current.seconds(since: UTCTime(milliseconds: wire.signedDate))
            guard abs(age) <= maxAge else { throw .stale(ageSeconds: Int(age.rounded()), maxAgeSeconds: Int(maxAge)) }
        }
        return DecodedRealtimeRequestBody(originalTransactionId: wire.originalTransactionId,
                                          appAppleId: wire.appAppleId ?? appAppleId ?? 0, productId: wire.productId,
                                          userLocale: wire.userLocale, requestIdentifier: wire.requestIdentifier,
                                          environment: wire.environment, signedDate: wire.signedDate)
    }

    /// The payload of a compact JWS signed the way Apple signs (ES256 over an x5c chain to a trusted
    /// root, with Apple's leaf and intermediate markers), verified at the date `signedDate` reads from
    /// the payload (or now, with `onlineChecks`). Environment, app and freshness are the caller's to check.
    public func verifiedPayload(_ jws: String, signedDate: ([UInt8]) throws(SignedPayloadError) -> Int64) throws(SignedPayloadError) -> [UInt8] {
        try verifiedPayload(compact: Array(Self.trimmed(jws).utf8)[...], signedDate: signedDate)
    }

    private func verifiedPayload(compact: ArraySlice<UInt8>,
                                 signedDate: ([UInt8]) throws(SignedPayloadError) -> Int64) throws(SignedPayloadError) -> [UInt8] {
        // Split by hand on the bytes: the header (the certificates, most of the bytes) is decoded
        // only when its exact bytes are not already in the cache of verified chains.
        let dot = UInt8(ascii: ".")
        guard let first = Self.index(of: dot, in: compact), let second = Self.index(of: dot, in: compact[(first + 1)...]),
              Self.index(of: dot, in: compact[(second + 1)...]) == nil else {
            let dots = compact.reduce(0) { $1 == dot ? $0 + 1 : $0 }
            throw .malformed("a compact JWS has three dot-separated parts; this has \(dots + 1)")
        }
        guard let payloadJSON = Base64URL.decode(compact[(first + 1)..<second]) else {
            throw .malformed("the JWS payload is not base64url")
        }
        guard let signature = Base64URL.decode(compact[(second + 1)...]) else {
            throw .malformed("the JWS signature is not base64url")
        }
        // The date to verify at comes from the payload before its signature is checked, as in Apple's
        // own libraries: a forged date cannot help, because the chain and signature must still verify.
        let signed = try signedDate(payloadJSON)
        let current = clock.time()
        let time = onlineChecks ? current : UTCTime(milliseconds: signed)
        let (key, hashedHeader) = try leafKey(headerSegment: compact[..<first], at: time, now: current)
        // The signing input is `header.payload`; the header and its dot were hashed when the chain verified.
        // The key is a verified chain's leaf, so it may earn a table of its multiples.
        guard keyTables.verify(signature: signature, hashedPrefix: hashedHeader, rest: compact[(first + 1)..<second], key: key) else {
            throw .badSignature
        }
        return payloadJSON
    }

    /// Where `byte` first occurs, found with the C library's `memchr`: the header before the first
    /// dot is most of a payload's 5 KB.
    private static func index(of byte: UInt8, in bytes: ArraySlice<UInt8>) -> Int? {
        bytes.withUnsafeBytes { raw in
            guard let base = raw.baseAddress, let found = memchr(base, Int32(byte), raw.count) else { return nil }
            return bytes.startIndex + (UnsafeRawPointer(found) - base)
        }
    }

    /// The leaf's key once the chain in the header has verified at `time`, from the cache when this
    /// exact header verified recently and `time` lies inside every certificate's validity window;
    /// with it, SHA-256 over the header's bytes and the dot after them, to finish per payload.
    private func leafKey(headerSegment: ArraySlice<UInt8>, at time: UTCTime,
                         now: UTCTime) throws(SignedPayloadError) -> (ES256PublicKey, SHA256State) {
        if let cached = chainCache.key(for: headerSegment, at: time, now: now) { return cached }
        guard let headerJSON = Base64URL.decode(headerSegment) else { throw .malformed("the JWS header is not base64url") }
        let header: JWSHeader
        do {
            header = try JSONDecoder().decode(JWSHeader.self, from: Data(headerJSON))
        } catch {
            throw .malformed("the JWS header is not a JSON object with a string 'alg'")
        }
        guard header.alg == "ES256" else { throw .unsupportedAlgorithm(header.alg) }
        guard let x5c = header.x5c else { throw .malformed("the JWS header has no x5c certificate chain") }
        guard x5c.count == 3 else { throw .wrongCertificateCount(x5c.count) }
        var chain: [X509Certificate] = []
        for (index, encoded) in x5c.enumerated() {
            do {
                chain.append(try X509Certificate(base64DER: encoded))
            } catch {
                throw .malformed("x5c certificate \(index) is not a base64 DER certificate (\(error.description))")
            }
        }
        do {
            try X509Chain.verify(chain: chain, trustedRoots: trustedRoots, at: time.date, requiredExtensions: [
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
        guard let key = chain[0].publicKey else { throw .badSignature }
        var hashedHeader = SHA256State()
        hashedHeader.update(headerSegment)
        hashedHeader.update([UInt8(ascii: ".")][...])
        chainCache.store(key, hashedHeader: hashedHeader, for: headerSegment, validFrom: UTCTime(chain.map(\.notBefore).max()!),
                         validUntil: UTCTime(chain.map(\.notAfter).min()!), now: now)
        return (key, hashedHeader)
    }
}

/// The payload as sent: `appAppleId` may be missing from a Sandbox payload.
private struct WirePayload: Decodable {
    var originalTransactionId: String
    var appAppleId: Int64?
    var productId: String
    var userLocale: String
    var requestIdentifier: String
    var environment: String
    var signedDate: Int64

    /// Apple's payload is flat strings and integers, read by a strict scanner; any other shape goes
    /// to `JSONDecoder`, which decides (and words the error) exactly as before.
    static func decode(_ json: [UInt8]) throws(SignedPayloadError) -> WirePayload {
        if let object = FlatJSONObject(json), let payload = WirePayload(object) { return payload }
        do {
            return try JSONDecoder().decode(WirePayload.self, from: Data(json))
        } catch {
            throw .malformed("the payload is not a DecodedRealtimeRequestBody (\(error))")
        }
    }

    private init?(_ object: FlatJSONObject) {
        guard let originalTransactionId = object.string("originalTransactionId"), let productId = object.string("productId"),
              let userLocale = object.string("userLocale"), let requestIdentifier = object.string("requestIdentifier"),
              let environment = object.string("environment"), let signedDate = object.integer("signedDate") else { return nil }
        if object["appAppleId"] != nil {
            guard let appAppleId = object.integer("appAppleId") else { return nil }
            self.appAppleId = appAppleId
        }
        self.originalTransactionId = originalTransactionId
        self.productId = productId
        self.userLocale = userLocale
        self.requestIdentifier = requestIdentifier
        self.environment = environment
        self.signedDate = signedDate
    }
}

/// Recently verified chains, keyed by the exact bytes of the JWS header that carried them, bounded
/// in count and age. A few entries at most, so a scan comparing lengths then bytes beats hashing 4 KB.
private final class VerifiedChainCache: Sendable {
    struct Entry: Sendable {
        var header: [UInt8]
        var key: ES256PublicKey
        /// SHA-256 over `header` and the dot after it: derived from the compared bytes alone.
        var hashedHeader: SHA256State
        var validFrom: UTCTime
        var validUntil: UTCTime
        var verifiedAt: UTCTime
    }

    private let entries = Mutex<[Entry]>([])
    private let hitCount = Atomic<Int>(0)

    var hits: Int { hitCount.load(ordering: .relaxed) }

    func key(for header: ArraySlice<UInt8>, at time: UTCTime, now: UTCTime) -> (ES256PublicKey, SHA256State)? {
        // Copied out (a reference count) so the comparison runs outside the lock.
        let entries = entries.withLock { $0 }
        guard let entry = entries.first(where: { Self.same($0.header, header) }),
              now.seconds(since: entry.verifiedAt) < SignedPayloadVerifier.chainCacheLifetime,
              entry.validFrom <= time, time <= entry.validUntil else { return nil }
        hitCount.add(1, ordering: .relaxed)
        return (entry.key, entry.hashedHeader)
    }

    func store(_ key: ES256PublicKey, hashedHeader: SHA256State, for header: ArraySlice<UInt8>, validFrom: UTCTime, validUntil: UTCTime,
               now: UTCTime) {
        let entry = Entry(header: Array(header), key: key, hashedHeader: hashedHeader, validFrom: validFrom,
                          validUntil: validUntil, verifiedAt: now)
        entries.withLock { entries in
            entries.removeAll {
                now.seconds(since: $0.verifiedAt) >= SignedPayloadVerifier.chainCacheLifetime || Self.same($0.header, header)
            }
            if entries.count >= SignedPayloadVerifier.chainCacheCapacity,
               let oldest = entries.indices.min(by: { entries[$0].verifiedAt < entries[$1].verifiedAt }) {
                entries.remove(at: oldest)
            }
            entries.append(entry)
        }
    }

    private static func same(_ stored: [UInt8], _ header: ArraySlice<UInt8>) -> Bool {
        guard stored.count == header.count else { return false }
        guard !stored.isEmpty else { return true }
        return stored.withUnsafeBytes { a in header.withUnsafeBytes { b in memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0 } }
    }
}
