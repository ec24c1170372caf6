import Crypto
import Testing

@Suite("HMAC-SHA256, the keyed pseudonym's primitive")
struct HMACTests {
    private func hex(_ text: String) -> [UInt8] {
        var bytes: [UInt8] = []
        var index = text.startIndex
        while index < text.endIndex {
            let next = text.index(index, offsetBy: 2)
            bytes.append(UInt8(text[index..<next], radix: 16)!)
            index = next
        }
        return bytes
    }

    @Test("gives RFC 4231's published MACs, for a short key, a key shorter than the hash and a key longer than the block")
    func rfc4231Vectors() {
        // Test case 1: 20-byte key of 0x0b, "Hi There".
        #expect(HMACSHA256(key: [UInt8](repeating: 0x0b, count: 20)).mac(Array("Hi There".utf8)).hexString
            == "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7")
        // Test case 2: key "Jefe".
        #expect(HMACSHA256(key: Array("Jefe".utf8)).mac(Array("what do ya want for nothing?".utf8)).hexString
            == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
        // Test case 6: a 131-byte key, hashed first.
        #expect(HMACSHA256(key: [UInt8](repeating: 0xaa, count: 131))
            .mac(Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8)).hexString
            == "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54")
        // The hex form pseudonyms use, straight from the MAC.
        #expect(HMACSHA256(key: Array("Jefe".utf8)).macHex(Array("what do ya want for nothing?".utf8))
            == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
    }

    @Test("one prepared key answers many messages, from many threads, the same as a fresh one")
    func preparedKeyIsReusable() async {
        let key = HMACSHA256(key: hex("000102030405060708090a0b0c0d0e0f"))
        let expected = (0..<64).map { HMACSHA256(key: hex("000102030405060708090a0b0c0d0e0f")).mac(Array("message \($0)".utf8)) }
        await withTaskGroup(of: Bool.self) { group in
            for worker in 0..<4 {
                group.addTask {
                    (0..<64).allSatisfy { index in key.mac(Array("message \((index + worker * 16) % 64)".utf8)) == expected[(index + worker * 16) % 64] }
                }
            }
            for await agreed in group { #expect(agreed) }
        }
        #expect(!"\(key)".contains("0001"))
    }
}
