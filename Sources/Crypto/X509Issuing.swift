internal import COpenSSL
public import Foundation

/// Issues X.509 certificates signed with ES256 keys: for test chains and for an emulator that
/// signs Apple-style payloads with a chain of its own. Never for anything a customer trusts.
extension X509Certificate {
    /// A certificate for `publicKey` named `CN=commonName`, signed by `issuerKey` on behalf of
    /// `issuer` (self-signed when nil). Each OID in `markerOIDs` is added as a non-critical
    /// extension holding ASN.1 NULL, the way Apple marks its intermediate and leaf certificates.
    public static func issue(commonName: String, publicKey: ES256PublicKey, issuer: X509Certificate?,
                             issuerKey: ES256PrivateKey, isCertificateAuthority: Bool,
                             notBefore: Date, notAfter: Date, serial: Int = 1,
                             markerOIDs: [String] = []) throws(CryptoError) -> X509Certificate {
        guard let x509 = X509_new() else { throw OpenSSL.error("cannot allocate a certificate") }
        let certificate = X509Certificate(retaining: x509)
        var start = time_t(notBefore.timeIntervalSince1970)
        var end = time_t(notAfter.timeIntervalSince1970)
        guard X509_set_version(x509, 2) == 1,
              ASN1_INTEGER_set(X509_get_serialNumber(x509), serial) == 1,
              X509_time_adj_ex(X509_getm_notBefore(x509), 0, 0, &start) != nil,
              X509_time_adj_ex(X509_getm_notAfter(x509), 0, 0, &end) != nil,
              X509_set_pubkey(x509, publicKey.pkey) == 1 else {
            throw OpenSSL.error("cannot fill in the certificate")
        }
        guard let name = X509_NAME_new() else { throw OpenSSL.error("cannot allocate a name") }
        defer { X509_NAME_free(name) }
        guard X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8, commonName, -1, -1, 0) == 1,
              X509_set_subject_name(x509, name) == 1,
              X509_set_issuer_name(x509, issuer.map { X509_get_subject_name($0.x509) } ?? name) == 1 else {
            throw OpenSSL.error("cannot set the certificate's names")
        }
        var context = X509V3_CTX()
        X509V3_set_ctx(&context, issuer?.x509 ?? x509, x509, nil, nil, 0)
        var extensions: [(Int32, String)] = [
            (NID_basic_constraints, isCertificateAuthority ? "critical,CA:TRUE" : "critical,CA:FALSE"),
            (NID_key_usage, isCertificateAuthority ? "critical,keyCertSign,cRLSign" : "critical,digitalSignature"),
            (NID_subject_key_identifier, "hash"),
        ]
        if issuer != nil { extensions.append((NID_authority_key_identifier, "keyid")) }
        for (nid, value) in extensions {
            guard let made = X509V3_EXT_conf_nid(nil, &context, nid, value) else {
                throw OpenSSL.error("cannot make extension \(nid)")
            }
            defer { X509_EXTENSION_free(made) }
            guard X509_add_ext(x509, made, -1) == 1 else { throw OpenSSL.error("cannot add extension \(nid)") }
        }
        // DER of ASN.1 NULL: the extension carries no value, only its presence matters.
        let null: [UInt8] = [0x05, 0x00]
        for oid in markerOIDs {
            guard let object = OBJ_txt2obj(oid, 1) else { throw OpenSSL.error("'\(oid)' is not a dotted OID") }
            defer { ASN1_OBJECT_free(object) }
            guard let value = ASN1_OCTET_STRING_new() else { throw OpenSSL.error("cannot allocate an extension value") }
            defer { ASN1_OCTET_STRING_free(value) }
            guard ASN1_OCTET_STRING_set(value, null, Int32(null.count)) == 1,
                  let made = X509_EXTENSION_create_by_OBJ(nil, object, 0, value) else {
                throw OpenSSL.error("cannot make extension \(oid)")
            }
            defer { X509_EXTENSION_free(made) }
            guard X509_add_ext(x509, made, -1) == 1 else { throw OpenSSL.error("cannot add extension \(oid)") }
        }
        guard X509_sign(x509, issuerKey.pkey, EVP_sha256()) > 0 else { throw OpenSSL.error("cannot sign the certificate") }
        return certificate
    }

    /// The certificate as a PEM block.
    public var pem: String {
        OpenSSL.writtenString { PEM_write_bio_X509($0, x509) == 1 } ?? ""
    }
}

/// A root, an intermediate carrying Apple's intermediate OID and a leaf carrying Apple's leaf
/// OID, with the leaf's key: what signs Apple-style `signedPayload`s in tests and the emulator.
public struct AppleStyleSigningChain: Sendable {
    /// Apple's marker on the intermediate (Apple Worldwide Developer Relations) certificate.
    public static let intermediateOID = "1.2.840.113635.100.6.2.1"
    /// Apple's marker on the certificate that signs App Store payloads.
    public static let leafOID = "1.2.840.113635.100.6.11.1"

    public let root: X509Certificate
    public let rootKey: ES256PrivateKey
    public let intermediate: X509Certificate
    public let intermediateKey: ES256PrivateKey
    public let leaf: X509Certificate
    public let leafKey: ES256PrivateKey

    /// A fresh chain with new keys, every certificate valid from `notBefore` to `notAfter`.
    public init(name: String = "retention-sync test", notBefore: Date = Date(timeIntervalSinceNow: -86_400),
                notAfter: Date = Date(timeIntervalSinceNow: 365 * 86_400)) throws(CryptoError) {
        rootKey = ES256PrivateKey.generate()
        intermediateKey = ES256PrivateKey.generate()
        leafKey = ES256PrivateKey.generate()
        root = try X509Certificate.issue(commonName: "\(name) root", publicKey: rootKey.publicKey, issuer: nil,
                                         issuerKey: rootKey, isCertificateAuthority: true,
                                         notBefore: notBefore, notAfter: notAfter, serial: 1)
        intermediate = try X509Certificate.issue(commonName: "\(name) intermediate", publicKey: intermediateKey.publicKey,
                                                 issuer: root, issuerKey: rootKey, isCertificateAuthority: true,
                                                 notBefore: notBefore, notAfter: notAfter, serial: 2,
                                                 markerOIDs: [Self.intermediateOID])
        leaf = try X509Certificate.issue(commonName: "\(name) leaf", publicKey: leafKey.publicKey, issuer: intermediate,
                                         issuerKey: intermediateKey, isCertificateAuthority: false,
                                         notBefore: notBefore, notAfter: notAfter, serial: 3, markerOIDs: [Self.leafOID])
    }

    /// A chain from parts kept earlier (the emulator's `--state`), so a restarted emulator keeps its root.
    public init(root: X509Certificate, rootKey: ES256PrivateKey, intermediate: X509Certificate, intermediateKey: ES256PrivateKey,
                leaf: X509Certificate, leafKey: ES256PrivateKey) {
        self.root = root
        self.rootKey = rootKey
        self.intermediate = intermediate
        self.intermediateKey = intermediateKey
        self.leaf = leaf
        self.leafKey = leafKey
    }

    /// The three certificates then the three keys as PEM blocks, in that order (private: keep it 0600).
    public var pem: String {
        [root.pem, intermediate.pem, leaf.pem, rootKey.pkcs8PEM, intermediateKey.pkcs8PEM, leafKey.pkcs8PEM]
            .map { $0.hasSuffix("\n") ? $0 : $0 + "\n" }.joined()
    }

    /// Reads what `pem` wrote.
    public init(pem text: String) throws(CryptoError) {
        let certificates = try X509Certificate.loadPEM(text)
        let keyBlocks = text.components(separatedBy: "-----BEGIN PRIVATE KEY-----").dropFirst().map { "-----BEGIN PRIVATE KEY-----" + $0 }
        guard certificates.count == 3, keyBlocks.count == 3 else {
            throw .invalidInput("a signing chain holds 3 certificates and 3 private keys, found \(certificates.count) and \(keyBlocks.count)")
        }
        self.init(root: certificates[0], rootKey: try ES256PrivateKey(pem: keyBlocks[0]),
                  intermediate: certificates[1], intermediateKey: try ES256PrivateKey(pem: keyBlocks[1]),
                  leaf: certificates[2], leafKey: try ES256PrivateKey(pem: keyBlocks[2]))
    }

    /// The JWS `x5c` header value: leaf, intermediate, root, each standard base64 of its DER.
    public var x5c: [String] { [leaf, intermediate, root].map { Base64.encode($0.der) } }

    /// Signs `payloadJSON` as Apple signs a realtime request: ES256 with the chain in `x5c`.
    public func sign(payloadJSON: [UInt8]) throws(CryptoError) -> String {
        try JWS.sign(header: JWSHeader(alg: "ES256", x5c: x5c), payloadJSON: payloadJSON, key: leafKey)
    }
}
