import Crypto

/// Where a customer falls in a traffic split. The bucket depends only on the salt (the split
/// group) and the customer's `originalTransactionId`, so the same customer always gets the same
/// answer, and re-weighting one group never moves the customers of another.
public enum TrafficBucket {
    /// Stable bucket in 0..<10000: first 8 bytes of SHA-256("\(salt):\(originalTransactionId)") as a
    /// big-endian UInt64, mod 10000.
    public static func bucket(salt: String, originalTransactionId: String) -> Int {
        // Hashed in three pieces rather than joined first: a request hashes one per split group.
        var state = SHA256State()
        state.update(salt)
        state.update(":")
        state.update(originalTransactionId)
        let value = state.digestPrefix64()
        // 2^64 is so much larger than 10,000 that the modulo bias is below one part in 10^15.
        return Int(value % UInt64(SnapshotSplit.bucketCount))
    }
}
