/// SplitMix64's output step: a bijection of 64-bit words whose every output bit depends on every
/// input bit. The join's tables and fingerprints hash with it (words already random, or not).
enum HashMix {
    static func mix(_ value: UInt64) -> UInt64 {
        var z = value &+ 0x9E37_79B9_7F4A_7C15
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
