/// HMAC-SHA256 (RFC 2104) under one key, prepared once: the key's inner and outer pads are absorbed
/// into two SHA-256 states at creation, copied as values for each message, so a MAC costs two short
/// digests and no allocation, key schedule or algorithm fetch. Safe to share across threads; the key
/// never leaves it and is never printed.
public final class HMACSHA256: Sendable, CustomStringConvertible {
    /// SHA-256 after the key's inner pad, and after its outer pad: values, copied for each message.
    private let inner: SHA256State
    private let outer: SHA256State

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

    public var description: String { "HMACSHA256(key: <redacted>)" }

    private static func state(absorbing pad: [UInt8]) -> SHA256State {
        var state = SHA256State()
        pad.withUnsafeBytes { state.update($0) }
        return state
    }

    /// The 32-byte MAC of `message`.
    public func mac<Bytes: Collection>(_ message: Bytes) -> [UInt8] where Bytes.Element == UInt8 {
        var digest = macDigest(message)
        return digest.withBytes { Array($0) }
    }

    /// The MAC of `message` as 64 lowercase hex digits.
    public func macHex<Bytes: Collection>(_ message: Bytes) -> String where Bytes.Element == UInt8 {
        var digest = macDigest(message)
        return digest.withBytes { LowercaseHex.string($0) }
    }

    private func macDigest<Bytes: Collection>(_ message: Bytes) -> SHA256Digest where Bytes.Element == UInt8 {
        var state = inner
        if message.withContiguousStorageIfAvailable({ state.update(UnsafeRawBufferPointer($0)) }) == nil {
            Array(message).withUnsafeBytes { state.update($0) }
        }
        var innerDigest = state.finalized()
        state = outer
        innerDigest.withBytes { state.update($0) }
        return state.finalized()
    }

    /// Compares two MACs in time independent of where they differ.
    public static func equal(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for index in a.indices { difference |= a[index] ^ b[index] }
        return difference == 0
    }
}
