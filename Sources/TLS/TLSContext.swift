internal import COpenSSL
import Foundation

/// A server's TLS settings: its certificate chain and key, TLS 1.2 and 1.3 only. It owns its
/// `SSL_CTX`; a new context (from re-read files) replaces an old one without disturbing the
/// sessions the old one started, which keep it alive until they end.
public final class TLSContext: Sendable {
    // OpenSSL documents an SSL_CTX as safe to share between threads once configured.
    nonisolated(unsafe) let context: OpaquePointer
    public let certificateFile: String
    public let keyFile: String

    /// Reads a PEM certificate chain (leaf first) and its PEM private key.
    public init(certificateFile: String, keyFile: String) throws(TLSError) {
        guard let context = SSL_CTX_new(TLS_server_method()) else {
            throw TLSError(TLSError.takeOpenSSLError("cannot create a TLS context"))
        }
        self.context = context
        self.certificateFile = certificateFile
        self.keyFile = keyFile
        guard shim_SSL_CTX_set_min_proto_version(context, shim_TLS1_2_VERSION()) == 1,
              shim_SSL_CTX_set_max_proto_version(context, shim_TLS1_3_VERSION()) == 1 else {
            throw TLSError(TLSError.takeOpenSSLError("cannot restrict TLS to versions 1.2 and 1.3"))
        }
        _ = SSL_CTX_set_options(context, shim_SSL_server_options())
        guard FileManager.default.isReadableFile(atPath: certificateFile) else {
            throw TLSError("\(certificateFile): cannot read the TLS certificate file")
        }
        guard FileManager.default.isReadableFile(atPath: keyFile) else {
            throw TLSError("\(keyFile): cannot read the TLS private key file")
        }
        guard SSL_CTX_use_certificate_chain_file(context, certificateFile) == 1 else {
            throw TLSError(TLSError.takeOpenSSLError("\(certificateFile): not a PEM certificate chain"))
        }
        guard SSL_CTX_use_PrivateKey_file(context, keyFile, SSL_FILETYPE_PEM) == 1 else {
            throw TLSError(TLSError.takeOpenSSLError("\(keyFile): not a PEM private key"))
        }
        guard SSL_CTX_check_private_key(context) == 1 else {
            throw TLSError(TLSError.takeOpenSSLError("\(keyFile): the private key does not match the certificate in \(certificateFile)"))
        }
    }

    deinit { SSL_CTX_free(context) }

    /// Starts a server session on a connected socket; the handshake happens in `TLSSession.accept`.
    public func session(descriptor: Int32) throws(TLSError) -> TLSSession {
        guard let ssl = SSL_new(context) else { throw TLSError(TLSError.takeOpenSSLError("cannot create a TLS session")) }
        let session = TLSSession(owning: ssl, context: self)
        guard SSL_set_fd(ssl, descriptor) == 1 else {
            throw TLSError(TLSError.takeOpenSSLError("cannot attach the TLS session to its socket"))
        }
        return session
    }
}

/// One TLS connection over a blocking socket. It owns its `SSL`; one thread uses it at a time.
public final class TLSSession {
    fileprivate let ssl: OpaquePointer
    private let context: TLSContext

    fileprivate init(owning ssl: OpaquePointer, context: TLSContext) {
        self.ssl = ssl
        self.context = context
    }

    deinit { SSL_free(ssl) }

    /// The server side of the handshake; false when the client gave up or spoke something else.
    public func accept() -> Bool {
        let accepted = SSL_accept(ssl) == 1
        ERR_clear_error()
        return accepted
    }

    /// The protocol agreed, e.g. `TLSv1.3`.
    public var version: String { String(cString: SSL_get_version(ssl)) }

    /// Bytes read, or 0 when the connection ended, failed or timed out.
    public func read(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        var count = 0
        let ok = SSL_read_ex(ssl, buffer.baseAddress, buffer.count, &count) == 1
        if !ok { ERR_clear_error() }
        return ok ? count : 0
    }

    /// Writes all of `bytes`; false when the connection failed or timed out.
    public func write(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var offset = 0
        while offset < bytes.count {
            var written = 0
            guard SSL_write_ex(ssl, bytes.baseAddress! + offset, bytes.count - offset, &written) == 1 else {
                ERR_clear_error()
                return false
            }
            offset += written
        }
        return true
    }

    /// Sends close_notify without waiting for the peer's.
    public func close() {
        _ = SSL_shutdown(ssl)
        ERR_clear_error()
    }
}

/// Why TLS could not be set up; the text names the file and what OpenSSL said.
public struct TLSError: Error, Sendable, CustomStringConvertible {
    public var description: String

    public init(_ description: String) {
        self.description = description
    }

    static func takeOpenSSLError(_ context: String) -> String {
        let code = ERR_get_error()
        ERR_clear_error()
        guard code != 0 else { return context }
        var text = [CChar](repeating: 0, count: 256)
        ERR_error_string_n(code, &text, text.count)
        return "\(context) (\(String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)))"
    }
}

/// What one step of a session over a non-blocking socket came to.
public enum TLSStep: Equatable, Sendable {
    /// The step moved this many bytes (0 for a finished handshake).
    case done(Int)
    /// Try again when the socket is readable.
    case wantRead
    /// Try again when the socket is writable.
    case wantWrite
    /// The peer closed the connection or the session failed; close the socket.
    case closed
}

extension TLSSession {
    /// Prepares the session for a non-blocking socket: writes may be partial and retried.
    public func useNonBlockingSocket() {
        _ = shim_SSL_set_nonblocking_modes(ssl)
    }

    /// One step of the server handshake.
    public func handshakeStep() -> TLSStep {
        step(SSL_accept(ssl), success: 0)
    }

    /// Reads what has arrived, without waiting.
    public func readStep(into buffer: UnsafeMutableRawBufferPointer) -> TLSStep {
        var count = 0
        let result = SSL_read_ex(ssl, buffer.baseAddress, buffer.count, &count)
        return step(result, success: count)
    }

    /// Writes what the socket takes now.
    public func writeStep(_ bytes: UnsafeRawBufferPointer) -> TLSStep {
        var written = 0
        let result = SSL_write_ex(ssl, bytes.baseAddress, bytes.count, &written)
        return step(result, success: written)
    }

    private func step(_ result: Int32, success: Int) -> TLSStep {
        if result == 1 { return .done(success) }
        let reason = SSL_get_error(ssl, result)
        ERR_clear_error()
        switch reason {
        case SSL_ERROR_WANT_READ: return .wantRead
        case SSL_ERROR_WANT_WRITE: return .wantWrite
        default: return .closed
        }
    }
}
