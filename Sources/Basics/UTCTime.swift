public import Foundation

/// An instant as whole milliseconds since 1970 (UTC): the one time value that state documents, event
/// lines, logs, explanations and manifests write and read. One civil-date calculation (H. Hinnant's
/// `days_from_civil` and its inverse), one parser (RFC 3339) and one formatter serve all of them, so
/// nothing depends on the C library's time zone tables or Foundation's date formatters.
public struct UTCTime: Sendable, Hashable, Comparable, Codable {
    public var milliseconds: Int64

    public static let second: Int64 = 1000
    public static let minute: Int64 = 60_000
    public static let hour: Int64 = 3_600_000
    public static let day: Int64 = 86_400_000

    public init(milliseconds: Int64) {
        self.milliseconds = milliseconds
    }

    /// The millisecond holding `date` (a time between two milliseconds belongs to the earlier one).
    public init(_ date: Date) {
        milliseconds = Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
    }

    /// The clock's current millisecond.
    public init(now clock: any RetentionClock) {
        self.init(clock.date())
    }

    public var date: Date {
        Date(timeIntervalSince1970: Double(milliseconds) / 1000)
    }

    public static func < (lhs: UTCTime, rhs: UTCTime) -> Bool {
        lhs.milliseconds < rhs.milliseconds
    }

    // MARK: Arithmetic

    /// `milliseconds` later (earlier when negative).
    public static func + (time: UTCTime, milliseconds: Int64) -> UTCTime { UTCTime(milliseconds: time.milliseconds + milliseconds) }
    public static func - (time: UTCTime, milliseconds: Int64) -> UTCTime { UTCTime(milliseconds: time.milliseconds - milliseconds) }
    /// The milliseconds from `rhs` to `lhs`.
    public static func - (lhs: UTCTime, rhs: UTCTime) -> Int64 { lhs.milliseconds - rhs.milliseconds }

    /// `seconds` later (earlier when negative), cut to the millisecond below: the one rounding rule
    /// for a duration given in seconds.
    public func adding(seconds: Double) -> UTCTime { UTCTime(milliseconds: milliseconds + Int64((seconds * 1000).rounded(.down))) }

    /// Whole days from `earlier` to this time, rounded down (negative when `earlier` is later).
    public func days(since earlier: UTCTime) -> Int64 { Self.floorDivide(milliseconds - earlier.milliseconds, Self.day).quotient }

    /// Seconds from `earlier` to this time, for rates and durations shown to people.
    public func seconds(since earlier: UTCTime) -> Double { Double(milliseconds - earlier.milliseconds) / 1000 }

    // MARK: Coding

    /// Written as the millisecond form, `2026-01-31T12:00:00.000Z`; read back in exactly that form.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(formatted())
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let time = UTCTime.parse(text, exactly: .milliseconds) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "'\(text)' is not a UTC time like 2026-01-31T12:00:00.000Z")
        }
        self = time
    }

    // MARK: Civil dates

    /// A date and time of day in the proleptic Gregorian calendar, UTC.
    public struct Civil: Sendable, Hashable {
        public var year: Int64
        public var month: Int64
        public var day: Int64
        public var hour: Int64
        public var minute: Int64
        public var second: Int64
        public var millisecond: Int64
    }

    public var civil: Civil {
        let (days, inDay) = Self.floorDivide(milliseconds, Self.day)
        let (year, month, day) = Self.civilFromDays(days)
        return Civil(year: year, month: month, day: day, hour: inDay / Self.hour, minute: inDay / Self.minute % 60,
                     second: inDay / Self.second % 60, millisecond: inDay % Self.second)
    }

    /// `a / b` rounded towards minus infinity, and the remainder that goes with it (never negative).
    public static func floorDivide(_ a: Int64, _ b: Int64) -> (quotient: Int64, remainder: Int64) {
        let quotient = a >= 0 ? a / b : -((-a + b - 1) / b)
        return (quotient, a - quotient * b)
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date.
    public static func daysFromCivil(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The year, month and day `days` after 1970-01-01.
    public static func civilFromDays(_ days: Int64) -> (year: Int64, month: Int64, day: Int64) {
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

    public static func daysIn(month: Int64, of year: Int64) -> Int64 {
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        return [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][Int(month - 1)]
    }

    // MARK: Formatting

    /// The spellings the code base writes; every one is a prefix of, or shortens, the first.
    public enum Format: Sendable, Hashable {
        /// `2026-11-24T13:05:01.123Z`: state documents, event lines, logs, explanations.
        case milliseconds
        /// `2026-11-24T13:05:01Z`.
        case seconds
        /// `2026-11-24`.
        case date
    }

    public func formatted(_ format: Format = .milliseconds) -> String {
        String(decoding: formattedBytes(format), as: UTF8.self)
    }

    /// The ASCII bytes of `formatted`, written digit by digit: events are stamped on serve's answering path.
    public func formattedBytes(_ format: Format = .milliseconds) -> [UInt8] {
        let civil = civil
        let count = switch format {
        case .milliseconds: 24
        case .seconds: 20
        case .date: 10
        }
        var bytes = [UInt8](repeating: 0, count: count)
        func put(_ value: Int64, _ width: Int, at offset: Int) {
            var rest = value
            for index in stride(from: offset + width - 1, through: offset, by: -1) {
                bytes[index] = UInt8(truncatingIfNeeded: 0x30 + rest % 10)
                rest /= 10
            }
        }
        // Years of more than four digits, or before year 0, never occur in practice; they keep a readable
        // (if not RFC 3339) spelling so that every Int64 formats.
        guard (0...9999).contains(civil.year) else { return Array(Self.padded(civil, format).utf8) }
        put(civil.year, 4, at: 0)
        bytes[4] = UInt8(ascii: "-")
        put(civil.month, 2, at: 5)
        bytes[7] = UInt8(ascii: "-")
        put(civil.day, 2, at: 8)
        if format == .date { return bytes }
        bytes[10] = UInt8(ascii: "T")
        put(civil.hour, 2, at: 11)
        bytes[13] = UInt8(ascii: ":")
        put(civil.minute, 2, at: 14)
        bytes[16] = UInt8(ascii: ":")
        put(civil.second, 2, at: 17)
        if format == .seconds {
            bytes[19] = UInt8(ascii: "Z")
            return bytes
        }
        bytes[19] = UInt8(ascii: ".")
        put(civil.millisecond, 3, at: 20)
        bytes[23] = UInt8(ascii: "Z")
        return bytes
    }

    private static func padded(_ civil: Civil, _ format: Format) -> String {
        func pad(_ value: Int64, _ width: Int) -> String {
            let text = String(value)
            return text.count >= width ? text : String(repeating: "0", count: width - text.count) + text
        }
        let date = "\(pad(civil.year, 4))-\(pad(civil.month, 2))-\(pad(civil.day, 2))"
        let time = "T\(pad(civil.hour, 2)):\(pad(civil.minute, 2)):\(pad(civil.second, 2))"
        switch format {
        case .date: return date
        case .seconds: return date + time + "Z"
        case .milliseconds: return date + time + ".\(pad(civil.millisecond, 3))Z"
        }
    }

    // MARK: Parsing

    /// Why text is not an RFC 3339 timestamp; `message(for:)` words it for a person.
    public enum ParseError: Error, Sendable, Hashable {
        case notATimestamp
        case yearTooLong
        case noTime
        case noZone
        case malformedOffset
        case offsetHours(Int64)
        case offsetMinutes(Int64)
        case month(Int64)
        case day(Int64, month: Int64, year: Int64)
        case hour(Int64)
        case minute(Int64)
        case second(Int64)

        public func message(for text: String) -> String {
            switch self {
            case .notATimestamp: return "'\(text)' is not an RFC 3339 timestamp"
            case .yearTooLong: return "'\(text)' has a year with more than 4 digits"
            case .noTime: return "'\(text)' has no time: RFC 3339 needs a date, 'T', a time and a zone"
            case .noZone: return "'\(text)' has no zone: end it with Z or an offset like +01:00"
            case .malformedOffset: return "'\(text)' has a malformed zone offset (write +HH:MM, -HH:MM or Z)"
            case .offsetHours(let hours): return "'\(text)' has a zone offset of \(hours) hours (at most 23)"
            case .offsetMinutes(let minutes): return "'\(text)' has a zone offset with \(minutes) minutes (at most 59)"
            case .month(let month): return "'\(text)' has month \(month) (months are 01–12)"
            case .day(let day, let month, let year):
                let name = ["January", "February", "March", "April", "May", "June", "July", "August", "September",
                            "October", "November", "December"][Int(month - 1)]
                return "'\(text)' has day \(day), but \(name) \(year) has \(UTCTime.daysIn(month: month, of: year)) days"
            case .hour(let hour): return "'\(text)' has hour \(hour) (hours are 00–23; write the next day's T00:00:00)"
            case .minute(let minute): return "'\(text)' has minute \(minute) (minutes are 00–59)"
            case .second(let second): return "'\(text)' has second \(second) (seconds are 00–59; leap seconds are not supported)"
            }
        }
    }

    /// Parses an RFC 3339 timestamp (`2026-03-01T00:00:00Z`; any fraction of a second, cut to the
    /// millisecond; `Z` or an offset). Every field is range-checked, so `2026-02-29` or `T24:00` is an
    /// error that names the part, never a date rolled over into the next month.
    public static func parse(_ text: String) throws(ParseError) -> UTCTime {
        var text = text
        // `withUTF8` rethrows untyped errors, so the typed one travels out in a `Result`.
        return try text.withUTF8 { bytes in Result { () throws(ParseError) in try parse(bytes) } }.get()
    }

    public static func parse(_ b: UnsafeBufferPointer<UInt8>) throws(ParseError) -> UTCTime {
        func digits(_ at: Int, _ count: Int) -> Int64? {
            guard at + count <= b.count else { return nil }
            var value: Int64 = 0
            for index in at ..< at + count {
                let byte = b[index]
                guard byte >= 0x30, byte <= 0x39 else { return nil }
                value = value * 10 + Int64(byte - 0x30)
            }
            return value
        }
        func at(_ index: Int, _ one: Unicode.Scalar, _ other: Unicode.Scalar? = nil) -> Bool {
            index < b.count && (b[index] == UInt8(ascii: one) || other.map { b[index] == UInt8(ascii: $0) } == true)
        }
        guard let year = digits(0, 4), at(4, "-") else {
            throw b.count > 4 && digits(0, 5) != nil ? .yearTooLong : .notATimestamp
        }
        guard let month = digits(5, 2), at(7, "-"), let day = digits(8, 2) else { throw .notATimestamp }
        guard at(10, "T", "t") else { throw .noTime }
        guard let hour = digits(11, 2), at(13, ":"), let minute = digits(14, 2), at(16, ":"), let second = digits(17, 2) else {
            throw .notATimestamp
        }
        var index = 19
        var millisecond: Int64 = 0
        if at(index, ".") {
            index += 1
            let start = index
            var scale: Int64 = 100
            while index < b.count, b[index] >= 0x30, b[index] <= 0x39 {
                millisecond += Int64(b[index] - 0x30) * scale
                scale /= 10
                index += 1
            }
            guard index > start else { throw .notATimestamp }
        }
        var offsetMinutes: Int64 = 0
        if at(index, "Z", "z") {
            index += 1
        } else if at(index, "+", "-") {
            guard let offsetHour = digits(index + 1, 2), at(index + 3, ":"), let offsetMinute = digits(index + 4, 2) else {
                throw .malformedOffset
            }
            guard offsetHour <= 23 else { throw .offsetHours(offsetHour) }
            guard offsetMinute <= 59 else { throw .offsetMinutes(offsetMinute) }
            offsetMinutes = (offsetHour * 60 + offsetMinute) * (b[index] == UInt8(ascii: "-") ? -1 : 1)
            index += 6
        } else {
            throw .noZone
        }
        guard index == b.count else { throw .notATimestamp }
        guard (1...12).contains(month) else { throw .month(month) }
        guard (1...daysIn(month: month, of: year)).contains(day) else { throw .day(day, month: month, year: year) }
        guard hour <= 23 else { throw .hour(hour) }
        guard minute <= 59 else { throw .minute(minute) }
        guard second <= 59 else { throw .second(second) }
        let days = daysFromCivil(year: year, month: month, day: day)
        let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offsetMinutes * 60
        return UTCTime(milliseconds: seconds * 1000 + millisecond)
    }

    /// The time `text` spells in exactly `format` (`Z`, upper case, the format's digits), else nil: for
    /// documents that only ever hold what this code base wrote.
    public static func parse(_ text: String, exactly format: Format) -> UTCTime? {
        let full = format == .date ? text + "T00:00:00Z" : text
        guard let time = try? parse(full), time.formatted(format) == text else { return nil }
        return time
    }
}

extension JSONEncoder.DateEncodingStrategy {
    /// Dates as `UTCTime`'s millisecond form, `2026-01-31T12:00:00.000Z`.
    public static var utcMilliseconds: Self {
        .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(UTCTime(date).formatted())
        }
    }
}

extension JSONDecoder.DateDecodingStrategy {
    /// Dates written by `JSONEncoder.DateEncodingStrategy.utcMilliseconds`, and nothing else.
    public static var utcMilliseconds: Self {
        .custom { decoder in
            let container = try decoder.singleValueContainer()
            let text = try container.decode(String.self)
            guard let time = UTCTime.parse(text, exactly: .milliseconds) else {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: "'\(text)' is not a UTC time like 2026-01-31T12:00:00.000Z")
            }
            return time.date
        }
    }
}
