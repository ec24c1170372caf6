// The Crypto module: hashing, UUIDv5, base64url, ES256 keys and signatures, JWS and X.509,
// over OpenSSL libcrypto. No OpenSSL type appears in its public API.
