import Foundation
@testable import RealtimeServer
import Testing
import TestSupport

@Suite("A realtime request's body and log line")
struct RequestLineTests {
    @Test("the log line written field by field is the line the dictionary writer gives, escapes included")
    func logLineMatchesDictionaryWriter() {
        let texts = ["plain", "", "quote \" and backslash \\", "line\nbreak\r\ttab", "\u{01}\u{1F}\u{7F}", "é 😀 \u{2028}"]
        var entries: [RequestLogEntry] = [RequestLogEntry(environment: "production", path: "/apple")]
        for (index, text) in texts.enumerated() {
            var full = RequestLogEntry(environment: text, path: text, outcome: text, status: 200 + index,
                                       latencyMs: [0, 0.001, 1.5, 12.345, 1e-7, 123456.789][index], time: text)
            full.reason = text
            full.requestIdentifier = text
            full.productId = text
            full.userLocale = text
            full.transaction = text
            full.snapshot = text
            full.rule = text
            full.kind = text
            full.messageIdentifier = text
            full.splitGroup = text
            full.splitBuckets = text
            entries.append(full)
            var partial = RequestLogEntry(environment: "sandbox", path: "/s", outcome: "unauthorized", status: 401,
                                          latencyMs: 0.25, time: "2026-11-23T21:00:00.000Z")
            partial.reason = text
            entries.append(partial)
        }
        for entry in entries {
            let direct = LogLines()
            let dictionary = LogLines()
            RequestLog(sink: direct.append).write(entry)
            RequestLog(sink: dictionary.append).write(entry.fields)
            #expect(direct.value == dictionary.value)
            #expect(direct.value.count == 1)
        }
    }

    @Test("the signedPayload is read from any body JSONDecoder reads, and refused where it refuses")
    func bodiesReadAsJSONDecoderReadsThem() {
        struct Body: Decodable { var signedPayload: String }
        let bodies = [
            #"{"signedPayload":"eyJh.eyJi.c2ln"}"#, " { \"signedPayload\" : \"a.b.c\" }\n", #"{"signedPayload":"a\/b"}"#,
            #"{"signedPayload":"a.b.c","extra":{"nested":[1,2]}}"#, #"{"other":"x"}"#, #"{"signedPayload":1}"#,
            #"{"signedPayload":null}"#, #"{"signedPayload":"é"}"#, "", "{}", "[]", #"{"signedPayload":"a"} trailing"#,
            #"{"signedPayload":"a","signedPayload":"b"}"#,
        ]
        for text in bodies {
            let data = Data(text.utf8)
            let expected = (try? JSONDecoder().decode(Body.self, from: data))?.signedPayload
            #expect(RealtimeService.signedPayload(in: data) == expected, "\(text)")
        }
    }
}
