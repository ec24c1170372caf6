import Basics

/// Event times as milliseconds since 1970 (UTC), written in `UTCTime`'s millisecond form
/// `2026-11-24T13:05:01.123Z` and read in the contract's form: an RFC 3339 time in UTC (`Z`), with
/// any fraction of a second (cut, not rounded, to the millisecond).
public enum EventTime {
    public static let hour = UTCTime.hour
    public static let day = UTCTime.day

    /// Nil unless the bytes are an RFC 3339 UTC time with an upper-case `T` and `Z`.
    public static func parse(_ bytes: UnsafeBufferPointer<UInt8>) -> Int64? {
        guard bytes.count >= 20, bytes[10] == UInt8(ascii: "T"), bytes[bytes.count - 1] == UInt8(ascii: "Z") else { return nil }
        return (try? UTCTime.parse(bytes))?.milliseconds
    }

    public static func parse(_ text: String) -> Int64? {
        Array(text.utf8).withUnsafeBufferPointer { parse($0) }
    }

    /// Formats as `2026-11-24T13:05:01.123Z`.
    public static func format(_ millis: Int64) -> String {
        UTCTime(milliseconds: millis).formatted()
    }

    /// The 24 ASCII bytes of `format`, for the decision line written on serve's answering path.
    public static func formatBytes(_ millis: Int64) -> [UInt8] {
        UTCTime(milliseconds: millis).formattedBytes()
    }

    /// The string-interpolating formatter the byte writer replaced, for tests to compare with.
    public static func legacyFormatForTests(_ millis: Int64) -> String {
        let civil = UTCTime(milliseconds: millis).civil
        func pad(_ value: Int64, _ width: Int) -> String {
            let text = String(value)
            return text.count >= width ? text : String(repeating: "0", count: width - text.count) + text
        }
        return "\(pad(civil.year, 4))-\(pad(civil.month, 2))-\(pad(civil.day, 2))T\(pad(civil.hour, 2)):\(pad(civil.minute, 2))"
            + ":\(pad(civil.second, 2)).\(pad(civil.millisecond, 3))Z"
    }

    /// The partition names of the hour holding `millis`: `("2026-11-24", "13")`.
    public static func partition(_ millis: Int64) -> (date: String, hour: String) {
        let text = format(millis)
        let characters = Array(text)
        return (String(characters[0..<10]), String(characters[11..<13]))
    }

    /// The start of the hour holding `millis`.
    public static func hourStart(_ millis: Int64) -> Int64 {
        UTCTime.floorDivide(millis, hour).quotient * hour
    }
}
