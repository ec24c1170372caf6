import Foundation
import Crypto

/// SHA-256 over bytes, as the reconciler's fingerprints and versions use it.
enum Hashing {
    static func sha256Hex(_ data: Data) -> String { Digest.sha256Hex(Array(data)) }
    static func sha256Hex(_ text: String) -> String { Digest.sha256Hex(Array(text.utf8)) }
}
