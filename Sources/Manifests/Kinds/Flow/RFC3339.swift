import Basics

/// Strict RFC 3339 timestamps (`2026-03-01T00:00:00Z`, offsets and fractional seconds allowed):
/// every field is range-checked, so `2026-02-29` or `T24:00` is an error that names the part,
/// never a date rolled over into the next month.
enum RFC3339 {
    /// UNIX milliseconds, or why the text is not a timestamp.
    static func parse(_ text: String) -> Result<Int64, TimestampError> {
        do {
            return .success(try UTCTime.parse(text).milliseconds)
        } catch {
            return .failure(TimestampError(error.message(for: text)))
        }
    }
}

struct TimestampError: Error {
    var message: String
    init(_ message: String) { self.message = message }
}
