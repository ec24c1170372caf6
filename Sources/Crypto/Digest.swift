internal import COpenSSL

/// Message digests over OpenSSL's EVP interface.
public enum Digest {
    public static func sha1(_ bytes: [UInt8]) -> [UInt8] {
        digest(bytes, EVP_sha1())
    }

    public static func sha256(_ bytes: [UInt8]) -> [UInt8] {
        var state = SHA256State()
        bytes.withUnsafeBytes { state.update($0) }
        return state.digest()
    }

    /// The first 8 bytes of SHA-256 as a big-endian integer, without allocating: traffic splits
    /// hash one short string per split group on every realtime request.
    public static func sha256Prefix64(_ bytes: [UInt8]) -> UInt64 {
        var digest = bytes.withUnsafeBytes { SHA256Digest($0) }
        return digest.withBytes { UInt64(bigEndian: $0.loadUnaligned(as: UInt64.self)) }
    }

    /// SHA-256 as lowercase hexadecimal, the form digests take in snapshots and identities.
    public static func sha256Hex(_ bytes: [UInt8]) -> String {
        sha256(bytes).hexString
    }

    private static func digest(_ bytes: [UInt8], _ md: OpaquePointer?) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        let ok = bytes.withUnsafeBytes { raw in
            EVP_Digest(raw.baseAddress, raw.count, &output, &length, md, nil)
        }
        // EVP_Digest only fails on allocation failure or a missing algorithm, neither recoverable.
        precondition(ok == 1, "EVP_Digest failed: \(OpenSSL.takeError("unknown error"))")
        return Array(output.prefix(Int(length)))
    }
}

extension Array where Element == UInt8 {
    /// Lowercase hexadecimal, two digits per byte.
    public var hexString: String {
        withUnsafeBytes { LowercaseHex.string($0) }
    }
}

/// Bytes as lowercase hexadecimal, written straight into the string's storage.
enum LowercaseHex {
    static func string(_ bytes: UnsafeRawBufferPointer) -> String {
        String(unsafeUninitializedCapacity: bytes.count * 2) { text in
            let digits = ("0123456789abcdef" as StaticString).utf8Start
            for (index, byte) in bytes.enumerated() {
                text[2 * index] = digits[Int(byte >> 4)]
                text[2 * index + 1] = digits[Int(byte & 0x0f)]
            }
            return bytes.count * 2
        }
    }
}

/// Cryptographically secure random bytes from OpenSSL's DRBG.
public enum CryptoRandom {
    /// A random (version 4) UUID in lowercase 8-4-4-4-12 form, from OpenSSL's DRBG: Foundation's
    /// `UUID()` on Linux opens, reads and closes `/dev/urandom` for each one.
    public static func uuid() -> String {
        var bytes = (UInt64(0), UInt64(0))
        let ok = withUnsafeMutableBytes(of: &bytes) { RAND_bytes($0.baseAddress!.assumingMemoryBound(to: UInt8.self), 16) }
        precondition(ok == 1, "RAND_bytes failed: \(OpenSSL.takeError("unknown error"))")
        return withUnsafeMutableBytes(of: &bytes) { raw in
            raw[6] = (raw[6] & 0x0f) | 0x40
            raw[8] = (raw[8] & 0x3f) | 0x80
            return UUIDBytes.lowercase(UnsafeRawBufferPointer(raw))
        }
    }

    public static func bytes(_ count: Int) -> [UInt8] {
        guard count > 0 else { return [] }
        var output = [UInt8](repeating: 0, count: count)
        let ok = RAND_bytes(&output, Int32(count))
        precondition(ok == 1, "RAND_bytes failed: \(OpenSSL.takeError("unknown error"))")
        return output
    }
}

/// A UUID's 16 bytes as text (the shape check of text is `UUIDText` in the models).
public enum UUIDBytes {
    /// 16 bytes in lowercase 8-4-4-4-12 form, written straight into the string's storage.
    public static func lowercase(_ bytes: UnsafeRawBufferPointer) -> String {
        precondition(bytes.count == 16, "a UUID is 16 bytes")
        return String(unsafeUninitializedCapacity: 36) { text in
            let digits: StaticString = "0123456789abcdef"
            var at = 0
            for (index, byte) in bytes.enumerated() {
                if index == 4 || index == 6 || index == 8 || index == 10 {
                    text[at] = UInt8(ascii: "-")
                    at += 1
                }
                text[at] = digits.utf8Start[Int(byte >> 4)]
                text[at + 1] = digits.utf8Start[Int(byte & 0x0f)]
                at += 2
            }
            return at
        }
    }
}
