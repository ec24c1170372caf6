internal import COpenSSL

/// Internal helpers shared by the wrappers: OpenSSL's error queue, memory BIOs and DER output.
enum OpenSSL {
    /// The oldest error on this thread's queue as text, then clears the queue so a later failure
    /// does not report a stale reason.
    static func takeError(_ fallback: String) -> String {
        let code = ERR_get_error()
        ERR_clear_error()
        guard code != 0 else { return fallback }
        var buffer = [CChar](repeating: 0, count: 256)
        ERR_error_string_n(code, &buffer, buffer.count)
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    static func error(_ fallback: String) -> CryptoError {
        .openssl(takeError(fallback))
    }

    /// Runs `body` with a read-only memory BIO over `bytes`.
    static func withReadBIO<T>(_ bytes: [UInt8], _ body: (OpaquePointer) throws(CryptoError) -> T) throws(CryptoError) -> T {
        // BIO_new_mem_buf does not copy, so the buffer must outlive the BIO: keep both inside one scope.
        let copy = bytes.isEmpty ? [0] : bytes
        let result: Result<T, CryptoError> = copy.withUnsafeBytes { raw in
            guard let bio = BIO_new_mem_buf(raw.baseAddress, Int32(bytes.count)) else {
                return .failure(OpenSSL.error("cannot allocate a memory BIO"))
            }
            defer { BIO_free(bio) }
            do throws(CryptoError) {
                return .success(try body(bio))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// Runs `write` against a fresh memory BIO and returns what it wrote, or nil when it failed.
    static func writtenBytes(_ write: (OpaquePointer) -> Bool) -> [UInt8]? {
        guard let bio = BIO_new(BIO_s_mem()) else { return nil }
        defer { BIO_free(bio) }
        guard write(bio) else { return nil }
        var data: UnsafeMutablePointer<CChar>? = nil
        let length = shim_BIO_get_mem_data(bio, &data)
        guard length > 0, let data else { return [] }
        return data.withMemoryRebound(to: UInt8.self, capacity: length) {
            Array(UnsafeBufferPointer(start: $0, count: length))
        }
    }

    static func writtenString(_ write: (OpaquePointer) -> Bool) -> String? {
        writtenBytes(write).map { String(decoding: $0, as: UTF8.self) }
    }

    /// DER from an `i2d_*` function, which allocates its output when given a null pointer.
    static func der(_ encode: (UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>) -> Int32) -> [UInt8]? {
        var output: UnsafeMutablePointer<UInt8>? = nil
        let length = encode(&output)
        guard length > 0, let output else { return nil }
        defer { shim_OPENSSL_free(output) }
        return Array(UnsafeBufferPointer(start: output, count: Int(length)))
    }
}
