import Testing
@testable import Experiments

/// The event reader scans strings eight bytes at a time and finds members by a hash: whatever lies
/// where in a line, it reads what a byte-by-byte reader would.
@Suite struct EventLineParserTests {
    static func parse(_ line: String) throws(EventLineParser.Refusal) -> (event: Event?, parser: EventLineParser) {
        var parser = EventLineParser()
        let bytes = Array(line.utf8)
        let event = try bytes.withUnsafeBufferPointer { (buffer) throws(EventLineParser.Refusal) in
            try parser.parse(buffer, isOutcome: false)
        }
        return (event, parser)
    }

    @Test func aFlowNameIsReadWholeWhereverAnEscapeOrAQuoteFallsInIt() throws {
        // (as written in JSON, as read)
        let middles: [(String, String)] = [("\\\"", "\""), ("\\\\", "\\"), ("\\u00e9", "é"), ("é", "é"), ("\\n", "\n"), ("", "")]
        for before in 0 ..< 20 {
            for after in [0, 1, 7, 8, 9, 17] {
                for (written, read) in middles {
                    let name = String(repeating: "a", count: before) + written + String(repeating: "b", count: after)
                    let line = #"{"flow":""# + name + #"","rule":"r","time":"2026-11-01T00:00:00.000Z"}"#
                    let (event, parser) = try Self.parse(line)
                    let expected = String(repeating: "a", count: before) + read + String(repeating: "b", count: after)
                    #expect(event.flatMap { parser.interner.string($0.flow) } == expected, "\(line)")
                    #expect(event.flatMap { parser.interner.string($0.rule) } == "r", "\(line)")
                }
            }
        }
    }

    @Test func aControlCharacterInsideAStringIsRefusedWhereverItFalls() {
        for before in 0 ..< 20 {
            let line = #"{"flow":""# + String(repeating: "a", count: before) + "\u{01}" + #"bbbbbbbbbb"}"#
            #expect(throws: EventLineParser.Refusal.self, "\(before)") { try Self.parse(line) }
        }
        #expect(throws: EventLineParser.Refusal.self) { try Self.parse(#"{"flow":"aaaaaaaaaaaaaaaaaaaa"#) }
    }

    @Test func onlyTheContractsOwnMemberNamesAreRead() throws {
        // Names one byte off a read member's name, or sharing its length and both ends.
        let (event, parser) = try Self.parse(#"{"flox":"x","Flow":"x","rules":"x","productIdentifier":"x","productIX":"x","# +
                                             #""offerIdentifieR":"x","arm":"a","productId":"p"}"#)
        #expect(event?.flow == Interner.null)
        #expect(event?.rule == Interner.null)
        #expect(event.flatMap { parser.interner.string($0.arm) } == "a")
        #expect(event.flatMap { parser.interner.string($0.product) } == "p")
        #expect(event?.offer == Interner.null)
        // (That every member of the contract is read, each into its place, EventContractRoundTripTests shows.)
    }
}
