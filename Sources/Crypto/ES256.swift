internal import COpenSSL
import Foundation
import Synchronization

/// An ECDSA P-256 private key for ES256, such as an App Store Connect `.p8` key.
/// It owns its `EVP_PKEY` and frees it on deinit.
public final class ES256PrivateKey: Sendable {
    // EVP_PKEY is only read after construction; OpenSSL 3 allows concurrent signing with one key.
    nonisolated(unsafe) let pkey: OpaquePointer
    public let publicKey: ES256PublicKey
    private let signing: PreparedContexts

    private init(owning pkey: OpaquePointer) throws(CryptoError) {
        self.pkey = pkey
        signing = PreparedContexts(pkey: pkey, operation: .sign)
        guard let spki = OpenSSL.der({ i2d_PUBKEY(pkey, $0) }) else {
            EVP_PKEY_free(pkey)
            throw OpenSSL.error("cannot export the public key")
        }
        do {
            publicKey = try ES256PublicKey(spkiDER: spki)
        } catch {
            EVP_PKEY_free(pkey)
            throw error
        }
    }

    deinit { EVP_PKEY_free(pkey) }

    /// Loads a PEM private key (PKCS#8 `BEGIN PRIVATE KEY`, as in a `.p8` file); refuses anything
    /// but an unencrypted EC P-256 key. The error never repeats the text it was given.
    public convenience init(pem: String) throws(CryptoError) {
        let pkey: OpaquePointer = try OpenSSL.withReadBIO(Array(pem.utf8)) { bio throws(CryptoError) in
            // A callback that supplies no passphrase, so an encrypted key fails instead of prompting.
            guard let key = PEM_read_bio_PrivateKey(bio, nil, { _, _, _, _ in 0 }, nil) else {
                ERR_clear_error()
                throw .invalidKey("not a PEM private key; expected an unencrypted PKCS#8 block starting with '-----BEGIN PRIVATE KEY-----', like an App Store Connect .p8 file")
            }
            return key
        }
        do {
            try ES256PublicKey.requireP256(pkey, what: "private key")
        } catch {
            EVP_PKEY_free(pkey)
            throw error
        }
        try self.init(owning: pkey)
    }

    /// Loads a `.p8` file. The error names the path, never the contents.
    public convenience init(contentsOfFile path: String) throws(CryptoError) {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw .invalidKey("cannot read key file '\(path)'")
        }
        do {
            try self.init(pem: String(decoding: data, as: UTF8.self))
        } catch .invalidKey(let reason) {
            throw .invalidKey("\(path): \(reason)")
        }
    }

    /// A fresh random P-256 key, for tests, the emulator and the demo.
    public static func generate() -> ES256PrivateKey {
        guard let pkey = shim_generate_p256() else {
            preconditionFailure("P-256 key generation failed: \(OpenSSL.takeError("unknown error"))")
        }
        do {
            return try ES256PrivateKey(owning: pkey)
        } catch {
            preconditionFailure("a generated P-256 key could not be exported: \(error)")
        }
    }

    /// The key as unencrypted PKCS#8 PEM, the format of an App Store Connect `.p8` file.
    public var pkcs8PEM: String {
        guard let pem = OpenSSL.writtenString({ PEM_write_bio_PrivateKey($0, pkey, nil, nil, 0, nil, nil) == 1 }) else {
            preconditionFailure("PKCS#8 export failed: \(OpenSSL.takeError("unknown error"))")
        }
        return pem
    }

    /// Signs SHA-256 of `message`; returns the 64-byte `r || s` form that JWS uses.
    public func sign(_ message: [UInt8]) throws(CryptoError) -> [UInt8] {
        var digest = message.withUnsafeBytes { SHA256Digest($0) }
        var der = [UInt8](repeating: 0, count: 80)
        var length = der.count
        let signed = signing.withContext { ctx in
            digest.withBytes { EVP_PKEY_sign(ctx, &der, &length, $0.baseAddress, $0.count) }
        }
        guard let signed else { throw OpenSSL.error("cannot start signing") }
        guard signed == 1 else { throw OpenSSL.error("signing failed") }
        return try ECDSASignature.raw(fromDER: Array(der.prefix(length)))
    }
}

/// An ECDSA P-256 public key for verifying ES256 signatures. It owns its `EVP_PKEY`.
public final class ES256PublicKey: Sendable {
    nonisolated(unsafe) let pkey: OpaquePointer
    /// The uncompressed point (`04 || x || y`, 65 bytes): the key's exact bytes.
    let point: [UInt8]
    private let verifying: PreparedContexts

    private init(owning pkey: OpaquePointer) throws(CryptoError) {
        do {
            try Self.requireP256(pkey, what: "public key")
        } catch {
            EVP_PKEY_free(pkey)
            throw error
        }
        var point = [UInt8](repeating: 0, count: 65)
        var length = 0
        guard EVP_PKEY_get_octet_string_param(pkey, "pub", &point, point.count, &length) == 1, length == 65, point[0] == 4 else {
            ERR_clear_error()
            EVP_PKEY_free(pkey)
            throw .invalidKey("the public key's point cannot be read in uncompressed form")
        }
        self.pkey = pkey
        self.point = point
        verifying = PreparedContexts(pkey: pkey, operation: .verify)
    }

    deinit { EVP_PKEY_free(pkey) }

    /// Loads a SubjectPublicKeyInfo PEM (`BEGIN PUBLIC KEY`).
    public convenience init(pem: String) throws(CryptoError) {
        let pkey: OpaquePointer = try OpenSSL.withReadBIO(Array(pem.utf8)) { bio throws(CryptoError) in
            guard let key = PEM_read_bio_PUBKEY(bio, nil, nil, nil) else {
                ERR_clear_error()
                throw .invalidKey("not a PEM public key; expected a block starting with '-----BEGIN PUBLIC KEY-----'")
            }
            return key
        }
        try self.init(owning: pkey)
    }

    /// Loads a DER SubjectPublicKeyInfo.
    public convenience init(spkiDER: [UInt8]) throws(CryptoError) {
        let pkey: OpaquePointer? = spkiDER.withUnsafeBufferPointer { buffer in
            var cursor = buffer.baseAddress
            return d2i_PUBKEY(nil, &cursor, buffer.count)
        }
        guard let pkey else {
            ERR_clear_error()
            throw .invalidKey("not a DER SubjectPublicKeyInfo")
        }
        try self.init(owning: pkey)
    }

    /// A key from its affine coordinates, as a JWK carries them (`x` and `y`, 32 bytes each).
    public convenience init(x: [UInt8], y: [UInt8]) throws(CryptoError) {
        guard x.count == 32, y.count == 32 else {
            throw .invalidKey("P-256 coordinates must be 32 bytes each (got \(x.count) and \(y.count))")
        }
        // The SPKI for every P-256 key is this fixed prefix (id-ecPublicKey, prime256v1, BIT STRING)
        // followed by the uncompressed point; d2i_PUBKEY then checks the point lies on the curve.
        let prefix: [UInt8] = [
            0x30, 0x59, 0x30, 0x13, 0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01,
            0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07, 0x03, 0x42, 0x00, 0x04,
        ]
        do {
            try self.init(spkiDER: prefix + x + y)
        } catch {
            throw .invalidKey("the coordinates are not a point on P-256")
        }
    }

    /// The key as SubjectPublicKeyInfo PEM (`BEGIN PUBLIC KEY`).
    public var spkiPEM: String {
        guard let pem = OpenSSL.writtenString({ PEM_write_bio_PUBKEY($0, pkey) == 1 }) else {
            preconditionFailure("SPKI export failed: \(OpenSSL.takeError("unknown error"))")
        }
        return pem
    }

    /// The key as DER SubjectPublicKeyInfo.
    public var spkiDER: [UInt8] {
        guard let der = OpenSSL.der({ i2d_PUBKEY(pkey, $0) }) else {
            preconditionFailure("SPKI export failed: \(OpenSSL.takeError("unknown error"))")
        }
        return der
    }

    /// True when `signature` is a valid 64-byte `r || s` ES256 signature of `message`.
    public func verify(signature: [UInt8], message: [UInt8]) -> Bool {
        var digest = message.withUnsafeBytes { SHA256Digest($0) }
        return verify(signature: signature, digest: &digest)
    }

    /// The same over part of a buffer, such as the signing input at the front of a compact JWS.
    public func verify(signature: [UInt8], message: ArraySlice<UInt8>) -> Bool {
        var digest = message.withUnsafeBytes { SHA256Digest($0) }
        return verify(signature: signature, digest: &digest)
    }

    /// The same where the message is a prefix already hashed into `prefix`, followed by `rest`:
    /// the front that many messages share (a JWS header whose chain is cached) is hashed once.
    public func verify(signature: [UInt8], hashedPrefix prefix: SHA256State, rest: ArraySlice<UInt8>) -> Bool {
        var state = prefix
        state.update(rest)
        var digest = state.finalized()
        return verify(signature: signature, digest: &digest)
    }

    func verify(signature: [UInt8], digest: inout SHA256Digest) -> Bool {
        guard signature.count == 64, let der = ECDSASignature.der(fromRaw: signature) else { return false }
        defer { ERR_clear_error() }
        let result = verifying.withContext { ctx in
            digest.withBytes { EVP_PKEY_verify(ctx, der, der.count, $0.baseAddress, $0.count) }
        }
        return result == 1
    }

    static func requireP256(_ pkey: OpaquePointer, what: String) throws(CryptoError) {
        guard EVP_PKEY_get_base_id(pkey) == EVP_PKEY_EC else {
            throw .invalidKey("the \(what) is not an elliptic-curve key; ES256 needs an EC P-256 key")
        }
        var name = [CChar](repeating: 0, count: 64)
        var length = 0
        guard EVP_PKEY_get_group_name(pkey, &name, name.count, &length) == 1 else {
            ERR_clear_error()
            throw .invalidKey("the \(what) has no named curve; ES256 needs an EC P-256 key")
        }
        let curve = String(decoding: name.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        guard curve == "prime256v1" || curve == "P-256" else {
            throw .invalidKey("the \(what) is on curve \(curve); ES256 needs P-256 (prime256v1)")
        }
    }
}

/// Conversion between OpenSSL's DER ECDSA-Sig-Value and JWS's fixed-width `r || s`, done by
/// OpenSSL itself: hand-sliced DER breaks whenever r or s has a leading zero byte.
enum ECDSASignature {
    static func raw(fromDER der: [UInt8]) throws(CryptoError) -> [UInt8] {
        let sig: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            var cursor = buffer.baseAddress
            return d2i_ECDSA_SIG(nil, &cursor, buffer.count)
        }
        guard let sig else { throw OpenSSL.error("cannot parse the DER signature") }
        defer { ECDSA_SIG_free(sig) }
        var r: OpaquePointer? = nil
        var s: OpaquePointer? = nil
        ECDSA_SIG_get0(sig, &r, &s)
        var raw = [UInt8](repeating: 0, count: 64)
        let written = raw.withUnsafeMutableBufferPointer { buffer in
            (BN_bn2binpad(r, buffer.baseAddress, 32), BN_bn2binpad(s, buffer.baseAddress! + 32, 32))
        }
        guard written.0 == 32, written.1 == 32 else { throw OpenSSL.error("signature component wider than 32 bytes") }
        return raw
    }

    /// The DER `ECDSA-Sig-Value` of a raw `r || s`, written directly: each half as the shortest
    /// positive INTEGER (leading zero bytes dropped, one `00` added before a high bit), exactly what
    /// `i2d_ECDSA_SIG` writes (a test holds the two equal). OpenSSL re-encodes what it parses and
    /// refuses any difference, so an encoding mistake here could only refuse a good signature.
    static func der(fromRaw raw: [UInt8]) -> [UInt8]? {
        guard raw.count == 64 else { return nil }
        var der = [UInt8](repeating: 0, count: 72)
        var length = 2
        for half in [0, 32] {
            var start = half
            while start < half + 31 && raw[start] == 0 { start += 1 }
            let pad = raw[start] & 0x80 != 0 ? 1 : 0
            let count = half + 32 - start + pad
            der[length] = 0x02
            der[length + 1] = UInt8(count)
            length += 2 + pad
            for index in start..<(half + 32) {
                der[length] = raw[index]
                length += 1
            }
        }
        der[0] = 0x30
        der[1] = UInt8(length - 2)
        der.removeLast(der.count - length)
        return der
    }

    /// The same through OpenSSL (`BN_bin2bn`, `ECDSA_SIG_set0`, `i2d_ECDSA_SIG`), which the direct
    /// encoding is tested against.
    static func derThroughOpenSSL(fromRaw raw: [UInt8]) -> [UInt8]? {
        guard raw.count == 64, let sig = ECDSA_SIG_new() else { return nil }
        defer { ECDSA_SIG_free(sig) }
        let r = raw.withUnsafeBufferPointer { BN_bin2bn($0.baseAddress, 32, nil) }
        let s = raw.withUnsafeBufferPointer { BN_bin2bn($0.baseAddress! + 32, 32, nil) }
        // ECDSA_SIG_set0 takes ownership of r and s only when it succeeds.
        guard let r, let s, ECDSA_SIG_set0(sig, r, s) == 1 else {
            BN_free(r)
            BN_free(s)
            return nil
        }
        return OpenSSL.der { i2d_ECDSA_SIG(sig, $0) }
    }
}

/// `EVP_PKEY_CTX`s for one key, initialised once for signing or verifying and lent out one call at a
/// time: `EVP_DigestVerifyInit` and its kin look the algorithm up in OpenSSL 3's provider store and
/// copy the key on every call, which costs more than everything but the curve arithmetic.
final class PreparedContexts: Sendable {
    enum Operation { case sign, verify }

    /// Idle contexts kept for reuse; more than this many at once are made and freed per call.
    static let capacity = 64

    nonisolated(unsafe) private let pkey: OpaquePointer
    private let operation: Operation
    /// Addresses of idle `EVP_PKEY_CTX`s, each used by one thread at a time.
    private let idle = Mutex<[UInt]>([])

    /// `pkey` must outlive this object (each context also holds its own reference to it).
    init(pkey: OpaquePointer, operation: Operation) {
        self.pkey = pkey
        self.operation = operation
    }

    deinit {
        for address in idle.withLock({ $0 }) { EVP_PKEY_CTX_free(OpaquePointer(bitPattern: address)) }
    }

    /// Runs `body` with a context ready for `EVP_PKEY_sign` or `EVP_PKEY_verify` on SHA-256
    /// digests; nil when OpenSSL could not prepare one.
    func withContext(_ body: (OpaquePointer) -> Int32) -> Int32? {
        let reused = idle.withLock { $0.popLast() }.flatMap { OpaquePointer(bitPattern: $0) }
        guard let ctx = reused ?? prepare() else { return nil }
        let result = body(ctx)
        let kept = idle.withLock { idle in
            guard idle.count < Self.capacity else { return false }
            idle.append(UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(ctx))))
            return true
        }
        if !kept { EVP_PKEY_CTX_free(ctx) }
        return result
    }

    private func prepare() -> OpaquePointer? {
        guard let ctx = EVP_PKEY_CTX_new_from_pkey(nil, pkey, nil) else { return nil }
        let started = operation == .sign ? EVP_PKEY_sign_init(ctx) : EVP_PKEY_verify_init(ctx)
        // Naming the digest makes OpenSSL refuse any input that is not exactly 32 bytes.
        guard started == 1, EVP_PKEY_CTX_set_signature_md(ctx, OpenSSLDigests.sha256) == 1 else {
            EVP_PKEY_CTX_free(ctx)
            return nil
        }
        return ctx
    }
}

/// SHA-256 fetched from OpenSSL's provider once: `EVP_sha256()` makes every signing and
/// verification fetch it again, which costs more than the hashing of a small JWS.
enum OpenSSLDigests {
    nonisolated(unsafe) static let sha256: OpaquePointer? = EVP_MD_fetch(nil, "SHA256", nil)
}
