internal import COpenSSL

/// HMAC-SHA256 (RFC 2104) under one key, prepared once: the key's inner and outer pads are absorbed
/// into two SHA-256 states at creation, so each message costs two short digests and no key schedule
/// or algorithm fetch. Safe to share across threads; the key never leaves it and is never printed.
public final class HMACSHA256: @unchecked Sendable, CustomStringConvertible {
    private let inner: OpaquePointer
    private let outer: OpaquePointer

    public static let outputSize = 32
    private static let blockSize = 64

    /// Any key length; a key longer than SHA-256's 64-byte block is hashed first, as RFC 2104 says.
    public init(key: [UInt8]) {
        var block = key.count > Self.blockSize ? Digest.sha256(key) : key
        block += [UInt8](repeating: 0, count: Self.blockSize - block.count)
        inner = Self.state(absorbing: block.map { $0 ^ 0x36 })
        outer = Self.state(absorbing: block.map { $0 ^ 0x5c })
        for index in block.indices { block[index] = 0 }
    }

    deinit {
        EVP_MD_CTX_free(inner)
        EVP_MD_CTX_free(outer)
    }

    public var description: String { "HMACSHA256(key: <redacted>)" }

    private static func state(absorbing pad: [UInt8]) -> OpaquePointer {
        guard let context = EVP_MD_CTX_new() else { fatalError("EVP_MD_CTX_new failed: out of memory") }
        let ok = EVP_DigestInit_ex(context, OpenSSLDigests.sha256, nil) == 1
            && pad.withUnsafeBytes { EVP_DigestUpdate(context, $0.baseAddress, $0.count) } == 1
        precondition(ok, "SHA-256 is unavailable: \(OpenSSL.takeError("unknown error"))")
        return context
    }

    /// The 32-byte MAC of `message`.
    public func mac<Bytes: Collection>(_ message: Bytes) -> [UInt8] where Bytes.Element == UInt8 {
        guard let context = EVP_MD_CTX_new() else { fatalError("EVP_MD_CTX_new failed: out of memory") }
        defer { EVP_MD_CTX_free(context) }
        var digest = [UInt8](repeating: 0, count: Self.outputSize)
        var length: UInt32 = 0
        var ok = EVP_MD_CTX_copy_ex(context, inner) == 1
        ok = ok && (message.withContiguousStorageIfAvailable { EVP_DigestUpdate(context, $0.baseAddress, $0.count) }
            ?? Array(message).withUnsafeBytes { EVP_DigestUpdate(context, $0.baseAddress, $0.count) }) == 1
        ok = ok && EVP_DigestFinal_ex(context, &digest, &length) == 1
        ok = ok && EVP_MD_CTX_copy_ex(context, outer) == 1
        ok = ok && EVP_DigestUpdate(context, digest, Int(length)) == 1
        ok = ok && EVP_DigestFinal_ex(context, &digest, &length) == 1
        precondition(ok && length == UInt32(Self.outputSize), "HMAC-SHA256 failed: \(OpenSSL.takeError("unknown error"))")
        return digest
    }

    /// Compares two MACs in time independent of where they differ.
    public static func equal(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for index in a.indices { difference |= a[index] ^ b[index] }
        return difference == 0
    }
}
