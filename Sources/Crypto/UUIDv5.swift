/// Name-based UUIDs (version 5, SHA-1) per RFC 9562 section 5.5: the same namespace and name
/// always give the same identifier.
public enum UUIDv5 {
    /// The DNS namespace from RFC 9562 appendix A.
    public static let dnsNamespace = "6ba7b810-9dad-11d1-80b4-00c04fd430c8"

    /// A lowercase UUID string such as `2ed6657d-e927-568b-95e1-2665a8aea6a2`.
    public static func make(namespace: String, name: String) throws(CryptoError) -> String {
        guard let namespaceBytes = parse(namespace) else {
            throw .invalidInput("namespace '\(namespace)' is not a UUID (expected 8-4-4-4-12 hexadecimal digits)")
        }
        var hash = Array(Digest.sha1(namespaceBytes + Array(name.utf8)).prefix(16))
        hash[6] = (hash[6] & 0x0f) | 0x50
        hash[8] = (hash[8] & 0x3f) | 0x80
        return format(hash)
    }

    /// The 16 bytes of a UUID string in 8-4-4-4-12 form (either case), or nil.
    public static func parse(_ text: String) -> [UInt8]? {
        let chars = Array(text.utf8)
        guard chars.count == 36 else { return nil }
        var bytes = [UInt8]()
        bytes.reserveCapacity(16)
        var index = 0
        while index < chars.count {
            if [8, 13, 18, 23].contains(index) {
                guard chars[index] == UInt8(ascii: "-") else { return nil }
                index += 1
                continue
            }
            guard let high = nibble(chars[index]), let low = nibble(chars[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        return bytes.count == 16 ? bytes : nil
    }

    private static func format(_ bytes: [UInt8]) -> String {
        let hex = Array(bytes.hexString)
        let groups = [0..<8, 8..<12, 12..<16, 16..<20, 20..<32]
        return groups.map { String(hex[$0]) }.joined(separator: "-")
    }

    private static func nibble(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
