import Foundation

/// Strict RFC 3339 timestamps (`2026-03-01T00:00:00Z`, offsets and fractional seconds allowed):
/// every field is range-checked, so `2026-02-29` or `T24:00` is an error that names the part,
/// never a date rolled over into the next month.
enum RFC3339 {
    /// UNIX milliseconds, or why the text is not a timestamp.
    static func parse(_ text: String) -> Result<Int64, TimestampError> {
        let b = Array(text.utf8)
        func digits(_ at: Int, _ count: Int) -> Int? {
            guard at + count <= b.count else { return nil }
            var value = 0
            for byte in b[at..<(at + count)] {
                guard (0x30...0x39).contains(byte) else { return nil }
                value = value * 10 + Int(byte - 0x30)
            }
            return value
        }
        func at(_ index: Int, _ characters: String) -> Bool { index < b.count && characters.utf8.contains(b[index]) }
        let shape = TimestampError("'\(text)' is not an RFC 3339 timestamp")
        guard let year = digits(0, 4), at(4, "-") else {
            return .failure(b.count > 4 && digits(0, 5) != nil ? TimestampError("'\(text)' has a year with more than 4 digits") : shape)
        }
        guard let month = digits(5, 2), at(7, "-"), let day = digits(8, 2) else { return .failure(shape) }
        guard at(10, "Tt") else { return .failure(TimestampError("'\(text)' has no time: RFC 3339 needs a date, 'T', a time and a zone")) }
        guard let hour = digits(11, 2), at(13, ":"), let minute = digits(14, 2), at(16, ":"), let second = digits(17, 2) else {
            return .failure(shape)
        }
        var index = 19
        var milliseconds = 0.0
        if at(index, ".") {
            let start = index + 1
            index = start
            while index < b.count, (0x30...0x39).contains(b[index]) { index += 1 }
            guard index > start, let fraction = Double("0." + String(decoding: b[start..<index], as: UTF8.self)) else { return .failure(shape) }
            milliseconds = fraction * 1000
        }
        var offsetMinutes = 0
        if at(index, "Zz") {
            index += 1
        } else if at(index, "+-") {
            guard let offsetHour = digits(index + 1, 2), at(index + 3, ":"), let offsetMinute = digits(index + 4, 2) else {
                return .failure(TimestampError("'\(text)' has a malformed zone offset (write +HH:MM, -HH:MM or Z)"))
            }
            guard offsetHour <= 23 else { return .failure(TimestampError("'\(text)' has a zone offset of \(offsetHour) hours (at most 23)")) }
            guard offsetMinute <= 59 else { return .failure(TimestampError("'\(text)' has a zone offset with \(offsetMinute) minutes (at most 59)")) }
            offsetMinutes = (offsetHour * 60 + offsetMinute) * (b[index] == UInt8(ascii: "-") ? -1 : 1)
            index += 6
        } else {
            return .failure(TimestampError("'\(text)' has no zone: end it with Z or an offset like +01:00"))
        }
        guard index == b.count else { return .failure(shape) }
        guard (1...12).contains(month) else { return .failure(TimestampError("'\(text)' has month \(month) (months are 01–12)")) }
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        let monthDays = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]
        guard (1...monthDays).contains(day) else {
            let name = ["January", "February", "March", "April", "May", "June", "July", "August", "September",
                        "October", "November", "December"][month - 1]
            return .failure(TimestampError("'\(text)' has day \(day), but \(name) \(year) has \(monthDays) days"))
        }
        guard hour <= 23 else { return .failure(TimestampError("'\(text)' has hour \(hour) (hours are 00–23; write the next day's T00:00:00)")) }
        guard minute <= 59 else { return .failure(TimestampError("'\(text)' has minute \(minute) (minutes are 00–59)")) }
        guard second <= 59 else { return .failure(TimestampError("'\(text)' has second \(second) (seconds are 00–59; leap seconds are not supported)")) }
        let days = daysFromCivil(year: year, month: month, day: day)
        let seconds = Int64(days) * 86_400 + Int64(hour * 3600 + minute * 60 + second) - Int64(offsetMinutes * 60)
        return .success(seconds * 1000 + Int64(milliseconds.rounded(.down)))
    }

    /// Days since 1970-01-01 in the proleptic Gregorian calendar (Howard Hinnant's algorithm).
    static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}

struct TimestampError: Error {
    var message: String
    init(_ message: String) { self.message = message }
}
