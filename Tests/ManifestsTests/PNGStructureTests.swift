import Foundation
import Manifests
import RetentionMessagingModels
import Testing

/// PNGs that a decoder would refuse are refused before upload, from their chunks alone.
@Suite("Checking a PNG's structure without decoding it")
struct PNGStructureTests {
    static func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        let body = Array(type.utf8) + data
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in body {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? 0xEDB8_8320 ^ (crc >> 1) : crc >> 1 }
        }
        crc ^= 0xFFFF_FFFF
        return be(UInt32(data.count)) + body + be(crc)
    }

    static func be(_ value: UInt32) -> [UInt8] { [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)] }

    static func header(width: UInt32 = 1024, height: UInt32 = 1024, bitDepth: UInt8 = 8, colorType: UInt8 = 2,
                       compression: UInt8 = 0, filter: UInt8 = 0, interlace: UInt8 = 0) -> [UInt8] {
        chunk("IHDR", be(width) + be(height) + [bitDepth, colorType, compression, filter, interlace])
    }

    static let someData = chunk("IDAT", [0x78, 0x01, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01])
    static let end = chunk("IEND", [])

    static func png(_ chunks: [UInt8]...) -> [UInt8] { PNGInfo.signature + chunks.flatMap { $0 } }

    @Test("refused PNGs say what is wrong", arguments: [
        ([UInt8](), "empty"),
        (png(header(), end), "no image data"),
        (png(header(), chunk("IDAT", []), end), "image data (IDAT) is empty"),
        (png(header(colorType: 7), someData, end), "colour type 7 does not exist"),
        (png(header(bitDepth: 3), someData, end), "bit depth 3 is not allowed"),
        (png(header(bitDepth: 16, colorType: 3), someData, end), "bit depth 16 is not allowed for colour type 3"),
        (png(header(width: 0), someData, end), "width 0"),
        (png(header(compression: 1), someData, end), "compression method 1"),
        (png(header(interlace: 2), someData, end), "interlace method 2"),
        (png(header(colorType: 3), someData, end), "no PLTE chunk"),
        (png(header(), someData, chunk("tEXt", [65]), someData, end), "IDAT is out of place"),
        (png(header(), chunk("ABCD", []), someData, end), "unknown critical chunk ABCD"),
        (png(header(), someData, end, [0]), "data after its end chunk"),
        (png(header(), header(), someData, end), "no valid IHDR"),
    ])
    func refusedPNGs(_ bytes: [UInt8], _ expected: String) {
        do {
            _ = try PNGInfo.parse(bytes)
            Issue.record("accepted a PNG that must be refused (\(expected))")
        } catch {
            #expect(error.description.contains(expected), "\(error.description)")
        }
    }

    @Test("well-formed PNGs pass: palette with PLTE, ancillary chunks, IDAT split in several chunks")
    func wellFormedPNGs() throws {
        _ = try PNGInfo.parse(Self.png(Self.header(bitDepth: 4, colorType: 3), Self.chunk("PLTE", [0, 0, 0]), Self.someData, Self.end))
        _ = try PNGInfo.parse(Self.png(Self.header(), Self.chunk("tEXt", [65, 0, 66]), Self.someData, Self.someData, Self.end))
        _ = try PNGInfo.parse(Self.png(Self.header(bitDepth: 16, colorType: 0), Self.someData, Self.end))
    }

    @Test("a decompression bomb is judged by its header alone: its huge dimensions are refused without inflating it")
    func decompressionBombIsCheap() throws {
        let bomb = Self.png(Self.header(width: 100_000, height: 100_000), Self.someData, Self.end)
        let info = try PNGInfo.parse(bomb)
        #expect(info.appleProblem(for: .fullSize)?.contains("not 100000 × 100000") == true)
    }

    @Test("validate refuses a 0-byte image file instead of letting apply upload it")
    func emptyImageFileIsRefused() throws {
        let base = try BaseCopy()
        defer { base.remove() }
        try base.write("images/full.png", [])
        let problems = base.validate().with(code: "invalid-png")
        #expect(problems.count == 1)
        #expect(problems.first?.message == "'images/full.png': the file is empty (0 bytes)")
    }

    @Test("validate refuses an image with colour type 7", arguments: [UInt8(7)])
    func colourTypeSevenIsRefused(_ colorType: UInt8) throws {
        let base = try BaseCopy()
        defer { base.remove() }
        try base.write("images/full.png", Self.png(Self.header(width: 3840, height: 160, colorType: colorType), Self.someData, Self.end))
        #expect(base.validate().with(code: "invalid-png").first?.message.contains("colour type 7") == true)
    }
}
