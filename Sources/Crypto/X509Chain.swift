internal import COpenSSL
public import Foundation

/// Certificate chain verification against roots the caller trusts (never the system store).
public enum X509Chain {
    /// Verifies `chain` (leaf first, then intermediates; a trailing copy of the root is allowed) up to
    /// one of `trustedRoots` as of `date`, then checks that the certificate at each given position of
    /// the verified chain (0 = leaf) carries the required extension. Throws the first reason found.
    public static func verify(chain: [X509Certificate], trustedRoots: [X509Certificate], at date: Date,
                              requiredExtensions: [(certificateIndex: Int, oid: String)]) throws(X509VerificationError) {
        guard let leaf = chain.first else { throw .emptyChain }
        guard !trustedRoots.isEmpty else { throw .untrustedRoot("no trusted root certificates were supplied") }

        let verification = try Verification(leaf: leaf, intermediates: Array(chain.dropFirst()), roots: trustedRoots, date: date)
        let verified = try verification.run(chain: chain)
        for requirement in requiredExtensions {
            let index = requirement.certificateIndex
            guard verified.indices.contains(index), verified[index].hasExtension(oid: requirement.oid) else {
                throw .missingExtension(certificateIndex: index, oid: requirement.oid)
            }
        }
    }
}

/// Owns the store, the untrusted stack and the context of one verification, freed on deinit.
private final class Verification {
    let store: OpaquePointer
    let untrusted: OpaquePointer
    let context: OpaquePointer

    init(leaf: X509Certificate, intermediates: [X509Certificate], roots: [X509Certificate], date: Date) throws(X509VerificationError) {
        guard let store = X509_STORE_new() else { throw .invalidChain(OpenSSL.takeError("cannot allocate a store")) }
        guard let untrusted = shim_sk_X509_new_null() else {
            X509_STORE_free(store)
            throw .invalidChain(OpenSSL.takeError("cannot allocate a stack"))
        }
        guard let context = X509_STORE_CTX_new() else {
            shim_sk_X509_free(untrusted)
            X509_STORE_free(store)
            throw .invalidChain(OpenSSL.takeError("cannot allocate a verification context"))
        }
        self.store = store
        self.untrusted = untrusted
        self.context = context
        // The store takes its own reference to each root; the stack borrows the intermediates, which
        // the caller's X509Certificate objects keep alive for the whole verification.
        for root in roots where X509_STORE_add_cert(store, root.x509) != 1 {
            throw .invalidChain(OpenSSL.takeError("cannot add a trusted root"))
        }
        for certificate in intermediates where shim_sk_X509_push(untrusted, certificate.x509) <= 0 {
            throw .invalidChain(OpenSSL.takeError("cannot add an intermediate"))
        }
        guard X509_STORE_CTX_init(context, store, leaf.x509, untrusted) == 1 else {
            throw .invalidChain(OpenSSL.takeError("cannot start verification"))
        }
        // Setting the time also sets X509_V_FLAG_USE_CHECK_TIME. X509_V_FLAG_PARTIAL_CHAIN stays off,
        // so only a chain that ends at one of the supplied self-signed roots passes.
        X509_VERIFY_PARAM_set_time(X509_STORE_CTX_get0_param(context), time_t(date.timeIntervalSince1970.rounded(.down)))
    }

    deinit {
        X509_STORE_CTX_free(context)
        shim_sk_X509_free(untrusted)
        X509_STORE_free(store)
    }

    /// The lowest position in the chain OpenSSL built whose validity window excludes the date.
    private func firstOutsideValidity() -> Int? {
        guard let built = X509_STORE_CTX_get0_chain(context) else { return nil }
        let time = X509_VERIFY_PARAM_get_time(X509_STORE_CTX_get0_param(context))
        for index in 0..<shim_sk_X509_num(built) {
            guard let certificate = shim_sk_X509_value(built, index) else { continue }
            var checkTime = time
            if X509_cmp_time(X509_get0_notBefore(certificate), &checkTime) > 0
                || X509_cmp_time(X509_get0_notAfter(certificate), &checkTime) < 0 {
                return Int(index)
            }
        }
        return nil
    }

    /// Runs OpenSSL's verification; returns the verified chain, leaf first, root last.
    func run(chain: [X509Certificate]) throws(X509VerificationError) -> [X509Certificate] {
        let ok = X509_verify_cert(context)
        ERR_clear_error()
        guard ok == 1 else {
            let code = X509_STORE_CTX_get_error(context)
            let depth = Int(X509_STORE_CTX_get_error_depth(context))
            let reason = String(cString: X509_verify_cert_error_string(Int(code)))
            let subject = chain.indices.contains(depth) ? " (certificate \(depth), \(chain[depth].subject))" : " (certificate \(depth))"
            switch code {
            case X509_V_ERR_CERT_NOT_YET_VALID, X509_V_ERR_CERT_HAS_EXPIRED:
                // OpenSSL checks validity from the root down; report the position nearest the leaf.
                throw .expired(certificateIndex: firstOutsideValidity() ?? depth)
            case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY, X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT,
                 X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN, X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT,
                 X509_V_ERR_CERT_UNTRUSTED:
                throw .untrustedRoot(reason + subject)
            default:
                throw .invalidChain(reason + subject)
            }
        }
        guard let built = X509_STORE_CTX_get1_chain(context) else {
            throw .invalidChain(OpenSSL.takeError("OpenSSL returned no verified chain"))
        }
        defer { shim_sk_X509_pop_free(built) }
        var verified: [X509Certificate] = []
        for index in 0..<shim_sk_X509_num(built) {
            guard let certificate = shim_sk_X509_value(built, index), X509_up_ref(certificate) == 1 else {
                throw .invalidChain("cannot read the verified chain")
            }
            verified.append(X509Certificate(retaining: certificate))
        }
        return verified
    }
}

/// Why a certificate chain was refused.
public enum X509VerificationError: Error, Sendable, Equatable, CustomStringConvertible {
    case emptyChain
    /// The chain does not lead to a supplied root (OpenSSL's reason, e.g. a missing intermediate
    /// gives "unable to get local issuer certificate").
    case untrustedRoot(String)
    /// The certificate at this position (0 = leaf, then issuers up to the root) is not valid at the
    /// given date, either side of its window.
    case expired(certificateIndex: Int)
    case missingExtension(certificateIndex: Int, oid: String)
    /// Any other verification failure, with OpenSSL's reason.
    case invalidChain(String)

    public var description: String {
        switch self {
        case .emptyChain:
            "the certificate chain is empty"
        case .untrustedRoot(let reason):
            "the certificate chain does not lead to a trusted root: \(reason)"
        case .expired(let index):
            "certificate \(index) in the chain (0 = leaf) is not valid at the given date"
        case .missingExtension(let index, let oid):
            "certificate \(index) in the chain (0 = leaf) lacks the required extension \(oid)"
        case .invalidChain(let reason):
            "the certificate chain is invalid: \(reason)"
        }
    }
}
