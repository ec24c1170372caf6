/// Event times as milliseconds since 1970 (UTC), parsed from and written as the contract's ISO 8601 form
/// `2026-11-24T13:05:01.123Z`. Hand-written because millions of lines go through it.
public enum EventTime {
    public static let hour: Int64 = 3_600_000
    public static let day: Int64 = 86_400_000

    /// Parses `YYYY-MM-DDTHH:MM:SS[.fraction]Z`; fractions beyond milliseconds are cut, not rounded.
    public static func parse(_ bytes: UnsafeBufferPointer<UInt8>) -> Int64? {
        let start = 0
        guard bytes.count >= 20 else { return nil }
        func digits(_ offset: Int, _ count: Int) -> Int64? {
            var value: Int64 = 0
            for index in start + offset ..< start + offset + count {
                let byte = bytes[index]
                guard byte >= 0x30, byte <= 0x39 else { return nil }
                value = value * 10 + Int64(byte - 0x30)
            }
            return value
        }
        guard bytes[start + 4] == UInt8(ascii: "-"), bytes[start + 7] == UInt8(ascii: "-"),
              bytes[start + 10] == UInt8(ascii: "T"), bytes[start + 13] == UInt8(ascii: ":"),
              bytes[start + 16] == UInt8(ascii: ":"),
              let year = digits(0, 4), let month = digits(5, 2), let day = digits(8, 2),
              let hour = digits(11, 2), let minute = digits(14, 2), let second = digits(17, 2),
              (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61
        else { return nil }
        var index = start + 19
        var millis: Int64 = 0
        if bytes[index] == UInt8(ascii: ".") {
            index += 1
            var scale: Int64 = 100
            let fractionStart = index
            while index < bytes.endIndex, bytes[index] >= 0x30, bytes[index] <= 0x39 {
                millis += Int64(bytes[index] - 0x30) * scale
                scale /= 10
                index += 1
            }
            guard index > fractionStart else { return nil }
        }
        guard index == bytes.endIndex - 1, bytes[index] == UInt8(ascii: "Z") else { return nil }
        let days = daysFromCivil(year: year, month: month, day: day)
        return ((days * 24 + hour) * 60 + minute) * 60_000 + second * 1000 + millis
    }

    public static func parse(_ text: String) -> Int64? {
        Array(text.utf8).withUnsafeBufferPointer { parse($0) }
    }

    /// Formats as `2026-11-24T13:05:01.123Z`.
    public static func format(_ millis: Int64) -> String {
        String(decoding: formatBytes(millis), as: UTF8.self)
    }

    /// The 24 ASCII bytes of `format`, written digit by digit: events are stamped on serve's answering path.
    public static func formatBytes(_ millis: Int64) -> [UInt8] {
        let (days, inDay) = floorDivide(millis, day)
        let (year, month, dayOfMonth) = civilFromDays(days)
        var bytes = [UInt8](repeating: 0, count: 24)
        func put(_ value: Int64, _ width: Int, at offset: Int) {
            var rest = value
            for index in stride(from: offset + width - 1, through: offset, by: -1) {
                bytes[index] = UInt8(truncatingIfNeeded: 0x30 + rest % 10)
                rest /= 10
            }
        }
        guard (0...9999).contains(year) else { return Array(legacyFormat(millis).utf8) }
        put(year, 4, at: 0)
        bytes[4] = UInt8(ascii: "-")
        put(month, 2, at: 5)
        bytes[7] = UInt8(ascii: "-")
        put(dayOfMonth, 2, at: 8)
        bytes[10] = UInt8(ascii: "T")
        put(inDay / EventTime.hour, 2, at: 11)
        bytes[13] = UInt8(ascii: ":")
        put(inDay / 60_000 % 60, 2, at: 14)
        bytes[16] = UInt8(ascii: ":")
        put(inDay / 1000 % 60, 2, at: 17)
        bytes[19] = UInt8(ascii: ".")
        put(inDay % 1000, 3, at: 20)
        bytes[23] = UInt8(ascii: "Z")
        return bytes
    }

    /// The string-interpolating formatter the byte writer replaced, for tests to compare with.
    public static func legacyFormatForTests(_ millis: Int64) -> String { legacyFormat(millis) }

    /// Years outside 0…9999 (never an event's; kept so every Int64 formats).
    static func legacyFormat(_ millis: Int64) -> String {
        let (days, inDay) = floorDivide(millis, day)
        let (year, month, dayOfMonth) = civilFromDays(days)
        let hour = inDay / EventTime.hour
        let minute = inDay / 60_000 % 60
        let second = inDay / 1000 % 60
        let fraction = inDay % 1000
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(dayOfMonth, 2))T\(pad(hour, 2)):\(pad(minute, 2)):\(pad(second, 2)).\(pad(fraction, 3))Z"
    }

    /// The partition names of the hour holding `millis`: `("2026-11-24", "13")`.
    public static func partition(_ millis: Int64) -> (date: String, hour: String) {
        let text = format(millis)
        let characters = Array(text)
        return (String(characters[0..<10]), String(characters[11..<13]))
    }

    public static func pad(_ value: Int64, _ width: Int) -> String {
        let text = String(value)
        return text.count >= width ? text : String(repeating: "0", count: width - text.count) + text
    }

    public static func floorDivide(_ a: Int64, _ b: Int64) -> (Int64, Int64) {
        let q = a >= 0 ? a / b : -((-a + b - 1) / b)
        return (q, a - q * b)
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's `days_from_civil`).
    public static func daysFromCivil(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    static func civilFromDays(_ days: Int64) -> (Int64, Int64, Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}
