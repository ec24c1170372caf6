import RetentionMessagingModels
import Crypto
import Foundation

/// The App Store Connect bearer token: an ES256 JWT made fresh for every request.
enum AuthenticationToken {
    /// Seconds a token is valid; Apple refuses tokens that live longer than an hour.
    static let lifetime: Int64 = 300
    static let audience = "appstoreconnect-v1"
    /// Seconds before `exp` from which a refused token counts as expired: servers allow about a
    /// minute of clock drift, so Apple's clock may see the end that much sooner than ours.
    static let renewalMargin: Double = 60

    /// Fresh tokens one call sends after 401s for tokens that expired on their way. More than one, as
    /// a virtual clock can do that to a request twice; bounded, as a server that keeps doing it is broken.
    static let maxRenewals = 3

    /// Whether a token signed at `signedAt` has expired, or is within `renewalMargin` of it, at `now`.
    static func isNearExpiry(signedAt: Double, now: Double) -> Bool {
        Double(Int64(signedAt.rounded(.down)) + lifetime) - now <= renewalMargin
    }

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
