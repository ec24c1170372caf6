import RetentionMessagingModels
import Crypto
import Foundation

/// The App Store Connect bearer token: an ES256 JWT made fresh for every request.
enum AuthenticationToken {
    /// Seconds a token is valid; Apple refuses tokens that live longer than an hour.
    static let lifetime: Int64 = 300
    static let audience = "appstoreconnect-v1"

    struct Header: Encodable {
        var alg = "ES256"
        var kid: String
        var typ = "JWT"
    }

    struct Claims: Codable {
        var iss: String
        var iat: Int64
        var exp: Int64
        var aud: String
        var bid: String
    }

    static func make(_ credentials: Credentials, now: Double) throws(RetentionMessagingError) -> String {
        let issuedAt = Int64(now.rounded(.down))
        let claims = Claims(iss: credentials.issuerId, iat: issuedAt, exp: issuedAt + lifetime, aud: audience,
                            bid: credentials.bundleId)
        let header: Data
        let payload: Data
        do {
            header = try CanonicalJSON.encode(Header(kid: credentials.keyId))
            payload = try CanonicalJSON.encode(claims)
        } catch {
            throw .credentials("could not encode the token claims")
        }
        do {
            return try JWS.sign(headerJSON: Array(header), payloadJSON: Array(payload), key: credentials.privateKey)
        } catch {
            throw .credentials("could not sign the request with the private key (\(error))")
        }
    }
}
