internal import COpenSSL

/// SHA-256 as a value: OpenSSL's low-level state, updated in place and copied to resume from, so a
/// prefix that many messages share (a verified JWS header) is hashed once, and hashing a short
/// input allocates nothing.
public struct SHA256State: Sendable {
    private var context = SHA256_CTX()

    public init() {
        shim_SHA256_Init(&context)
    }

    public mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.count > 0 else { return }
        shim_SHA256_Update(&context, bytes.baseAddress, bytes.count)
    }

    public mutating func update(_ bytes: ArraySlice<UInt8>) {
        bytes.withUnsafeBytes { update($0) }
    }

    /// The UTF-8 bytes of `text`, read in place (a native string is not copied).
    public mutating func update(_ text: String) {
        var text = text
        text.withUTF8 { update(UnsafeRawBufferPointer($0)) }
    }

    /// The first 8 bytes of the digest as a big-endian integer, without allocating.
    public func digestPrefix64() -> UInt64 {
        var digest = finalized()
        return digest.withBytes { UInt64(bigEndian: $0.loadUnaligned(as: UInt64.self)) }
    }

    /// The digest of everything given so far; the state itself is left as it was, to resume from.
    public func digest() -> [UInt8] {
        var digest = finalized()
        return digest.withBytes { Array($0) }
    }

    func finalized() -> SHA256Digest {
        var copy = context
        var digest = SHA256Digest()
        digest.withMutableBytes { shim_SHA256_Final($0.baseAddress!.assumingMemoryBound(to: UInt8.self), &copy) }
        return digest
    }
}

/// A SHA-256 digest held inline, so hashing before signing or verifying allocates nothing.
struct SHA256Digest {
    private var bytes: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)

    init() {}

    init(_ message: UnsafeRawBufferPointer) {
        var state = SHA256State()
        state.update(message)
        self = state.finalized()
    }

    mutating func withBytes<T>(_ body: (UnsafeRawBufferPointer) -> T) -> T {
        withUnsafeBytes(of: &bytes) { body($0) }
    }

    mutating func withMutableBytes<T>(_ body: (UnsafeMutableRawBufferPointer) -> T) -> T {
        withUnsafeMutableBytes(of: &bytes) { body($0) }
    }
}
