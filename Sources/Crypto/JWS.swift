import Foundation

/// JWS compact serialization (RFC 7515) with ES256, the form of App Store Connect tokens and of
/// Apple's signed payloads.
public enum JWS {
    /// Signs `b64url(header).b64url(payload)` and returns the three-part compact form. The caller
    /// supplies the exact JSON bytes so the output is reproducible (use CanonicalJSON).
    public static func sign(headerJSON: [UInt8], payloadJSON: [UInt8], key: ES256PrivateKey) throws(CryptoError) -> String {
        try sign(encodedHeader: Base64URL.encode(headerJSON), payloadJSON: payloadJSON, key: key)
    }

    /// The same with the header already in base64url, for a signer whose header never changes.
    public static func sign(encodedHeader: String, payloadJSON: [UInt8], key: ES256PrivateKey) throws(CryptoError) -> String {
        let signingInput = encodedHeader + "." + Base64URL.encode(payloadJSON)
        let signature = try key.sign(Array(signingInput.utf8))
        return signingInput + "." + Base64URL.encode(signature)
    }

    /// Signs with a header encoded as sorted-key JSON (absent fields omitted), so equal headers
    /// always give equal bytes.
    public static func sign(header: JWSHeader, payloadJSON: [UInt8], key: ES256PrivateKey) throws(CryptoError) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let headerJSON: Data
        do {
            headerJSON = try encoder.encode(header)
        } catch {
            throw .invalidInput("the JWS header cannot be encoded as JSON")
        }
        return try sign(headerJSON: [UInt8](headerJSON), payloadJSON: payloadJSON, key: key)
    }

    /// Splits and decodes a compact JWS without verifying it; call `verify(with:)` on the result.
    public static func decode(_ compact: String) throws(CryptoError) -> DecodedJWS {
        let parts = compact.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3 else {
            throw .invalidInput("a compact JWS has three dot-separated parts; this has \(parts.count)")
        }
        guard let headerJSON = Base64URL.decode(String(parts[0])) else {
            throw .invalidInput("the JWS header is not base64url")
        }
        guard let payloadJSON = Base64URL.decode(String(parts[1])) else {
            throw .invalidInput("the JWS payload is not base64url")
        }
        guard let signature = Base64URL.decode(String(parts[2])) else {
            throw .invalidInput("the JWS signature is not base64url")
        }
        let header: JWSHeader
        do {
            header = try JSONDecoder().decode(JWSHeader.self, from: Data(headerJSON))
        } catch {
            throw .invalidInput("the JWS header is not a JSON object with a string 'alg'")
        }
        return DecodedJWS(
            header: header,
            headerJSON: headerJSON,
            payloadJSON: payloadJSON,
            signingInput: Array("\(parts[0]).\(parts[1])".utf8),
            signature: signature
        )
    }
}

/// The parts of a compact JWS, decoded but not yet verified.
public struct DecodedJWS: Sendable {
    public var header: JWSHeader
    public var headerJSON: [UInt8]
    public var payloadJSON: [UInt8]
    /// The ASCII bytes of `<b64 header>.<b64 payload>`, exactly as they were signed.
    public var signingInput: [UInt8]
    public var signature: [UInt8]

    public init(header: JWSHeader, headerJSON: [UInt8], payloadJSON: [UInt8], signingInput: [UInt8], signature: [UInt8]) {
        self.header = header
        self.headerJSON = headerJSON
        self.payloadJSON = payloadJSON
        self.signingInput = signingInput
        self.signature = signature
    }

    /// True only for `alg: ES256` and a signature that `key` verifies.
    public func verify(with key: ES256PublicKey) -> Bool {
        header.alg == "ES256" && key.verify(signature: signature, message: signingInput)
    }
}

/// The JOSE header fields this project reads and writes.
public struct JWSHeader: Sendable, Hashable, Codable {
    public var alg: String
    public var kid: String?
    public var typ: String?
    /// Base64 (not base64url) DER certificates, leaf first.
    public var x5c: [String]?

    public init(alg: String, kid: String? = nil, typ: String? = nil, x5c: [String]? = nil) {
        self.alg = alg
        self.kid = kid
        self.typ = typ
        self.x5c = x5c
    }
}
