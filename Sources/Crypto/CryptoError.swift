/// Why a cryptographic operation failed. The text never contains key material or the input it
/// refused, so it is safe to print and log.
public enum CryptoError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A key could not be loaded or used; the text says what was expected.
    case invalidKey(String)
    /// Input that is not in the expected form (a malformed UUID, JWS or certificate).
    case invalidInput(String)
    /// OpenSSL refused an operation; the text is OpenSSL's own error string.
    case openssl(String)

    public var description: String {
        switch self {
        case .invalidKey(let reason): "invalid key: \(reason)"
        case .invalidInput(let reason): "invalid input: \(reason)"
        case .openssl(let reason): "OpenSSL error: \(reason)"
        }
    }
}
