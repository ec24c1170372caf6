internal import CCurl
import Foundation

/// libcurl must be initialised once per process before any handle exists; a global `let` runs its
/// initialiser exactly once, thread-safely.
private let curlGlobalInit: CURLcode = rs_curl_global_init_default()

/// Owns one `CURL*` easy handle and its error buffer. A worker thread keeps one for its lifetime so
/// libcurl's connection cache is reused between requests.
final class CurlEasyHandle {
    let handle: UnsafeMutableRawPointer
    let errorBuffer: UnsafeMutablePointer<CChar>

    init?() {
        guard curlGlobalInit == CURLE_OK, let handle = curl_easy_init() else { return nil }
        self.handle = handle
        errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
    }

    deinit {
        curl_easy_cleanup(handle)
        errorBuffer.deallocate()
    }

    /// Clears every option from the previous request while keeping the connection and DNS caches.
    func reset() {
        curl_easy_reset(handle)
        errorBuffer[0] = 0
        _ = rs_curl_easy_setopt_pointer(handle, CURLOPT_ERRORBUFFER, errorBuffer)
    }

    /// libcurl's specific text for the last failure, falling back to the generic text for the code.
    func message(for code: CURLcode) -> String {
        let specific = String(cString: errorBuffer).trimmingCharacters(in: .whitespacesAndNewlines)
        if !specific.isEmpty { return specific }
        return String(cString: curl_easy_strerror(code))
    }
}

/// Owns one `curl_slist` of request headers; libcurl reads it during the transfer, so it must
/// outlive `curl_easy_perform`.
final class CurlHeaderList {
    private(set) var list: UnsafeMutablePointer<curl_slist>?

    init(_ lines: [String]) {
        for line in lines {
            list = curl_slist_append(list, line)
        }
    }

    deinit {
        curl_slist_free_all(list)
    }
}
