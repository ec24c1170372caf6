import Foundation
import RetentionMessagingModels
import Testing

@Suite("Realtime JSON written by hand matches Foundation")
struct CanonicalJSONWriterTests {
    static let tricky: [String] = {
        var controls = ""
        for value in 0..<0x20 { controls.unicodeScalars.append(Unicode.Scalar(value)!) }
        return ["", "00000000-0000-5000-8000-000000000001", controls, "quote \" backslash \\ slash / end",
                "\u{7F} é ü 😀 \u{2028}\u{2029} \u{FFFE}", "<script>&'", "eyJhbGciOiJFUzI1NiJ9.e30.sig_-", "\\u0000"]
    }()

    @Test("every answer kind, with quotes, control characters and non-ASCII text, has CanonicalJSON's exact bytes")
    func answersMatchCanonicalJSON() throws {
        var bodies: [RealtimeResponseBody] = [RealtimeResponseBody()]
        for text in Self.tricky {
            bodies.append(RealtimeResponseBody(message: RealtimeMessage(messageIdentifier: text)))
            bodies.append(RealtimeResponseBody(alternateProduct: AlternateProduct(messageIdentifier: text, productId: text,
                                                                                  billingPlanType: .monthly)))
            bodies.append(RealtimeResponseBody(alternateProduct: AlternateProduct(messageIdentifier: "m", productId: text)))
            bodies.append(RealtimeResponseBody(alternateProduct: AlternateProduct(messageIdentifier: "m", productId: "p",
                                                                                  billingPlanType: BillingPlanType(rawValue: text))))
            bodies.append(RealtimeResponseBody(promotionalOffer: PromotionalOffer(messageIdentifier: text,
                                                                                  promotionalOfferSignatureV2: text)))
        }
        // Not what the server sends, but the bytes must still agree.
        bodies.append(RealtimeResponseBody(message: RealtimeMessage(messageIdentifier: "a"),
                                           alternateProduct: AlternateProduct(messageIdentifier: "b", productId: "c"),
                                           promotionalOffer: PromotionalOffer(messageIdentifier: "d", promotionalOfferSignatureV2: "e")))
        for body in bodies {
            let expected = try CanonicalJSON.encode(body)
            #expect(body.canonicalJSON == Array(expected), "\(String(decoding: expected, as: UTF8.self))")
        }
    }

    @Test("integers of every size, and members with any text, have CanonicalJSON's exact bytes")
    func membersMatchCanonicalJSON() throws {
        let numbers: [Int64] = [0, 7, -1, 10, -10, 1_780_000_000_000, .max, .min, .max - 1, .min + 1]
        for number in numbers {
            var writer = CanonicalJSONWriter()
            writer.object { $0.member("n", integer: number) }
            #expect(writer.bytes == Array(try CanonicalJSON.encode(["n": number])), "\(number)")
        }
        for text in Self.tricky {
            var writer = CanonicalJSONWriter()
            writer.object {
                $0.member("a", string: text)
                $0.member(text.isEmpty ? "b" : "b" + text, string: "x")
            }
            let expected = try CanonicalJSON.encode(["a": text, text.isEmpty ? "b" : "b" + text: "x"])
            #expect(writer.bytes == Array(expected), "\(String(decoding: expected, as: UTF8.self))")
        }
    }

    /// A value as JSONDecoder reads a flat object's member.
    enum Flat: Decodable, Equatable {
        case string(String)
        case integer(Int64)
        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let text = try? container.decode(String.self) {
                self = .string(text)
            } else {
                self = .integer(try container.decode(Int64.self))
            }
        }
    }

    @Test("the flat-object scanner reads what JSONDecoder reads, and declines everything else")
    func flatObjectsAgreeWithJSONDecoder() throws {
        let accepted = [
            #"{}"#, #"{"signedPayload":"a.b.c"}"#, " {\n\t\"a\" : \"x\" ,\r\n \"b\":-12 } ",
            #"{"signedDate":1780000000000,"appAppleId":1234567890,"environment":"Production"}"#,
            #"{"n":0,"m":-0,"max":9223372036854775807,"min":-9223372036854775808}"#,
            #"{"a":"~!@#$%^&*()_+`-={}|[]:;'<>?,./ "}"#,
        ]
        for text in accepted {
            let object = try #require(FlatJSONObject(Array(text.utf8)), "\(text)")
            let decoded = try JSONDecoder().decode([String: Flat].self, from: Data(text.utf8))
            #expect(object.fields.count == decoded.count, "\(text)")
            for (key, value) in object.fields {
                switch value {
                case .string(let string): #expect(decoded[key] == .string(string), "\(text)")
                case .integer(let integer): #expect(decoded[key] == .integer(integer), "\(text)")
                }
            }
        }
        let declined = [
            "", " ", "{", "}", "[]", #"{"a":"x",}"#, #"{"a":"x"} x"#, #"{"a":"x"}{}"#, #"{"a":"\/"}"#, #"{"a\u0041":"x"}"#,
            #"{"a":"é"}"#, "{\"a\":\"\u{7F}\"}", "{\"a\":\"tab\there\"}", #"{"a":1.5}"#, #"{"a":1e3}"#, #"{"a":01}"#, #"{"a":-}"#,
            #"{"a":9223372036854775808}"#, #"{"a":-9223372036854775809}"#, #"{"a":true}"#, #"{"a":null}"#, #"{"a":{}}"#,
            #"{"a":[]}"#, #"{"a":"x","a":"y"}"#, #"{"a" "x"}"#, #"{a:"x"}"#, #"{"a":"x""#, #"{"a":"unterminated}"#,
        ]
        for text in declined {
            #expect(FlatJSONObject(Array(text.utf8)) == nil, "\(text)")
        }
    }

    @Test("a long string value is read eight bytes at a time, and a byte that ends or refuses it is found at every position")
    func flatObjectLongStrings() {
        let plain = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.~ !#$%&'()*+,/:;<=>?@[]^`{|}".utf8)
        for length in 0..<40 {
            let value = Array(plain.prefix(length))
            let text = Array(#"{"k":""#.utf8) + value + Array(#""}"#.utf8)
            #expect(FlatJSONObject(text)?.string("k") == String(decoding: value, as: UTF8.self), "\(length)")
            #expect(FlatJSONObject.stringRange("k", in: text).map { Array(text[$0]) } == value, "\(length)")
            for position in 0..<length {
                for refused: UInt8 in [0x5C, 0x1F, 0x7F, 0xC3, 0x00] {
                    var bad = value
                    bad[position] = refused
                    let badText = Array(#"{"k":""#.utf8) + bad + Array(#""}"#.utf8)
                    #expect(FlatJSONObject(badText) == nil, "\(length) \(position) \(refused)")
                    #expect(FlatJSONObject.stringRange("k", in: badText) == nil, "\(length) \(position) \(refused)")
                }
                // A quote inside ends the string early, which leaves bytes where a comma or brace must be.
                var quoted = value
                quoted[position] = 0x22
                #expect(FlatJSONObject(Array(#"{"k":""#.utf8) + quoted + Array(#""}"#.utf8)) == nil, "\(length) \(position)")
            }
        }
    }
}
