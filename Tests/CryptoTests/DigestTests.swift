import Crypto
import Testing

@Suite("Digests, UUIDv5 and base64url")
struct DigestTests {
    @Test("SHA-1 of \"abc\" matches the FIPS 180 vector")
    func sha1OfABC() {
        #expect(Digest.sha1(Array("abc".utf8)).hexString == "a9993e364706816aba3e25717850c26c9cd0d89d")
    }

    @Test("SHA-256 of \"abc\" matches the FIPS 180 vector, in lowercase hex")
    func sha256OfABC() {
        #expect(Digest.sha256Hex(Array("abc".utf8)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(Digest.sha256([]).hexString == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    }

    @Test("a UUIDv5 for www.example.com in the DNS namespace matches RFC 9562")
    func uuidV5Example() throws {
        #expect(try UUIDv5.make(namespace: UUIDv5.dnsNamespace, name: "www.example.com") == "2ed6657d-e927-568b-95e1-2665a8aea6a2")
    }

    @Test("a UUIDv5 namespace must be a UUID, and the error says so")
    func uuidV5RejectsBadNamespace() {
        #expect(throws: CryptoError.self) { try UUIDv5.make(namespace: "not-a-uuid", name: "x") }
        let upper = try? UUIDv5.make(namespace: UUIDv5.dnsNamespace.uppercased(), name: "www.example.com")
        #expect(upper == "2ed6657d-e927-568b-95e1-2665a8aea6a2")
    }

    @Test("base64url encodes without padding and decodes back, for every length")
    func base64URLRoundTrip() {
        for length in 0..<40 {
            let bytes = CryptoRandom.bytes(length)
            let text = Base64URL.encode(bytes)
            #expect(!text.contains("=") && !text.contains("+") && !text.contains("/"))
            #expect(Base64URL.decode(text) == bytes)
        }
        #expect(Base64URL.encode([0xfb, 0xff]) == "-_8")
        #expect(Base64URL.encode(Array("abc".utf8)) == "YWJj")
    }

    @Test("base64url decoding refuses characters outside its alphabet")
    func base64URLRejectsForeignCharacters() {
        #expect(Base64URL.decode("+/8") == nil)
        #expect(Base64URL.decode("ab$c") == nil)
        #expect(Base64URL.decode("a") == nil)
    }

    @Test("plain base64 (as in x5c) decodes with padding")
    func base64Decodes() {
        #expect(Base64.decode("+/8=") == [0xfb, 0xff])
        #expect(Base64.encode([0xfb, 0xff]) == "+/8=")
        #expect(Base64.decode("-_8") == nil)
    }
}
