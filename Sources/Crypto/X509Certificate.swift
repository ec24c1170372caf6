internal import COpenSSL
public import Foundation

/// A parsed X.509 certificate. It owns its `X509` handle and frees it on deinit.
public final class X509Certificate: Sendable {
    // The X509 is never mutated after parsing, so reading it from several threads is safe.
    nonisolated(unsafe) let x509: OpaquePointer

    private init(owning x509: OpaquePointer) {
        self.x509 = x509
    }

    /// Wraps a certificate whose reference the caller has already taken (X509_up_ref).
    convenience init(retaining x509: OpaquePointer) {
        self.init(owning: x509)
    }

    deinit { X509_free(x509) }

    public convenience init(der: [UInt8]) throws(CryptoError) {
        let parsed: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            var cursor = buffer.baseAddress
            return d2i_X509(nil, &cursor, buffer.count)
        }
        guard let parsed else {
            throw .invalidInput("not a DER X.509 certificate (\(OpenSSL.takeError("parse failed")))")
        }
        self.init(owning: parsed)
    }

    /// A certificate from one entry of a JWS `x5c` header: standard base64 of the DER.
    public convenience init(base64DER: String) throws(CryptoError) {
        guard let der = Base64.decode(base64DER) else {
            throw .invalidInput("the certificate is not standard base64")
        }
        try self.init(der: der)
    }

    /// Every `BEGIN CERTIFICATE` block in `text`, in order; throws when there is none.
    public static func loadPEM(_ text: String) throws(CryptoError) -> [X509Certificate] {
        let certificates: [X509Certificate] = try OpenSSL.withReadBIO(Array(text.utf8)) { bio in
            var found: [X509Certificate] = []
            while let x509 = PEM_read_bio_X509(bio, nil, nil, nil) {
                found.append(X509Certificate(owning: x509))
            }
            // The loop always ends on a "no start line" error at end of input; it is not a failure.
            ERR_clear_error()
            return found
        }
        guard !certificates.isEmpty else {
            throw .invalidInput("no PEM certificate found (expected '-----BEGIN CERTIFICATE-----')")
        }
        return certificates
    }

    /// A PEM file (one or several certificates) or a single DER certificate.
    public static func load(contentsOfFile path: String) throws(CryptoError) -> [X509Certificate] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw .invalidInput("cannot read certificate file '\(path)'")
        }
        let bytes = [UInt8](data)
        do {
            if bytes.starts(with: Array("-----BEGIN".utf8)) || String(decoding: bytes, as: UTF8.self).contains("-----BEGIN CERTIFICATE-----") {
                return try loadPEM(String(decoding: bytes, as: UTF8.self))
            }
            return [try X509Certificate(der: bytes)]
        } catch .invalidInput(let reason) {
            throw .invalidInput("\(path): \(reason)")
        }
    }

    /// The subject distinguished name in RFC 2253 form, e.g. `CN=Leaf,O=Example`.
    public var subject: String {
        Self.text(of: X509_get_subject_name(x509))
    }

    /// The issuer distinguished name in RFC 2253 form.
    public var issuer: String {
        Self.text(of: X509_get_issuer_name(x509))
    }

    public var notBefore: Date {
        Self.date(X509_get0_notBefore(x509))
    }

    public var notAfter: Date {
        Self.date(X509_get0_notAfter(x509))
    }

    /// The certificate's key when it is EC P-256, else nil.
    public var publicKey: ES256PublicKey? {
        guard let pkey = X509_get0_pubkey(x509),
              let spki = OpenSSL.der({ i2d_PUBKEY(pkey, $0) }) else {
            ERR_clear_error()
            return nil
        }
        return try? ES256PublicKey(spkiDER: spki)
    }

    /// True when the certificate carries an extension with this dotted OID, critical or not.
    public func hasExtension(oid: String) -> Bool {
        // no_name = 1: the text is only ever read as a dotted OID, never as a short or long name.
        guard let object = OBJ_txt2obj(oid, 1) else {
            ERR_clear_error()
            return false
        }
        defer { ASN1_OBJECT_free(object) }
        return X509_get_ext_by_OBJ(x509, object, -1) >= 0
    }

    public var der: [UInt8] {
        guard let der = OpenSSL.der({ i2d_X509(x509, $0) }) else {
            preconditionFailure("DER export of a parsed certificate failed: \(OpenSSL.takeError("unknown error"))")
        }
        return der
    }

    private static func text(of name: OpaquePointer?) -> String {
        OpenSSL.writtenString { X509_NAME_print_ex($0, name, 0, shim_XN_FLAG_RFC2253()) >= 0 } ?? ""
    }

    private static func date(_ time: UnsafePointer<ASN1_TIME>?) -> Date {
        var parts = tm()
        guard let time, ASN1_TIME_to_tm(time, &parts) == 1 else {
            ERR_clear_error()
            return Date(timeIntervalSince1970: 0)
        }
        return Date(timeIntervalSince1970: TimeInterval(timegm(&parts)))
    }
}
