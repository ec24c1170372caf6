import Basics
import Foundation
import Testing

@Suite("UTC time")
struct UTCTimeTests {
    @Test("each format spells the instant as Foundation's ISO 8601 formatter does, across Gregorian centuries and leap days")
    func formatsAgreeWithFoundation() throws {
        let withMilliseconds = ISO8601DateFormatter()
        withMilliseconds.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let withSeconds = ISO8601DateFormatter()
        withSeconds.formatOptions = [.withInternetDateTime]
        // From 1583: Foundation counts earlier dates in the Julian calendar.
        var value: Int64 = -12_200_000_000_000
        while value < 253_402_300_799_000 {
            // Whole seconds, so Foundation's fraction (a Double) cannot round differently.
            let time = UTCTime(milliseconds: value - value % 1000)
            #expect(time.formatted(.milliseconds) == withMilliseconds.string(from: time.date))
            #expect(time.formatted(.seconds) == withSeconds.string(from: time.date))
            #expect(time.formatted(.date) == String(time.formatted().prefix(10)))
            #expect(try UTCTime.parse(time.formatted()) == time)
            value += 777_777_777_777
        }
        #expect(UTCTime(milliseconds: 951_782_400_123).formatted() == "2000-02-29T00:00:00.123Z")
        #expect(UTCTime(milliseconds: -1).formatted() == "1969-12-31T23:59:59.999Z")
        #expect(UTCTime(Date(timeIntervalSince1970: 1_795_458_348.1239)).milliseconds == 1_795_458_348_123)
    }

    @Test("parsing takes RFC 3339 with offsets and any fraction, cut to the millisecond")
    func parsesRFC3339() throws {
        #expect(try UTCTime.parse("2026-03-01T00:00:00Z").milliseconds == 1_772_323_200_000)
        #expect(try UTCTime.parse("2026-03-01T01:00:00.1239+01:00").milliseconds == 1_772_323_200_123)
        #expect(try UTCTime.parse("2026-02-28t23:30:00-00:30z".replacingOccurrences(of: "z", with: "")).milliseconds == 1_772_323_200_000)
        #expect(UTCTime.parse("2026-11-23T18:25:48.123Z", exactly: .milliseconds)?.milliseconds == 1_795_458_348_123)
        #expect(UTCTime.parse("2026-11-23T18:25:48.12Z", exactly: .milliseconds) == nil)
        #expect(UTCTime.parse("2026-11-23", exactly: .date)?.formatted() == "2026-11-23T00:00:00.000Z")
        #expect(UTCTime.parse("2026-02-30", exactly: .date) == nil)
    }

    @Test("an impossible time is refused with the part that is wrong")
    func refusalsNameThePart() {
        let cases: [(String, UTCTime.ParseError)] = [
            ("2026-02-29T00:00:00Z", .day(29, month: 2, year: 2026)), ("2026-13-01T00:00:00Z", .month(13)),
            ("2026-01-01T24:00:00Z", .hour(24)), ("2026-01-01T00:60:00Z", .minute(60)), ("2026-01-01T00:00:60Z", .second(60)),
            ("2026-01-01", .noTime), ("2026-01-01T00:00:00", .noZone), ("2026-01-01T00:00:00+1", .malformedOffset),
            ("2026-01-01T00:00:00+24:00", .offsetHours(24)), ("20260-01-01T00:00:00Z", .yearTooLong), ("yesterday", .notATimestamp),
        ]
        for (text, expected) in cases {
            #expect(throws: expected, "\(text)") { try UTCTime.parse(text) }
        }
        #expect(UTCTime.ParseError.day(29, month: 2, year: 2026).message(for: "x") == "'x' has day 29, but February 2026 has 28 days")
    }

    @Test("the JSON date strategies write and read the millisecond form, and nothing else")
    func jsonStrategies() throws {
        struct Stamped: Codable, Equatable { var at: Date }
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .utcMilliseconds
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .utcMilliseconds
        let value = Stamped(at: Date(timeIntervalSince1970: 1_795_458_348.123))
        let data = try encoder.encode(value)
        #expect(String(decoding: data, as: UTF8.self) == #"{"at":"2026-11-23T18:25:48.123Z"}"#)
        #expect(try decoder.decode(Stamped.self, from: data) == value)
        #expect(throws: DecodingError.self) { try decoder.decode(Stamped.self, from: Data(#"{"at":"2026-11-23T18:25:48Z"}"#.utf8)) }
    }
}
