import SyntheticImages
import Foundation
import TestSupport
import RetentionMessaging
import RetentionMessagingModels
import Testing

@Suite("PNG files as Apple's image rules read them")
struct PNGTests {
    @Test("a written RGB picture reads back with its size and no alpha")
    func writtenPictureReadsBack() throws {
        let png = PNGWriter.rgb(width: 3840, height: 160) { x, _ in (UInt8(x / 15), 40, 90) }
        let info = try PNGInfo.parse(png)
        #expect(info.width == 3840 && info.height == 160)
        #expect(info.colorType == 2 && info.bitDepth == 8)
        #expect(!info.hasAlpha && !info.hasTransparencyChunk)
    }

    @Test("flat pictures stay small enough to generate thousands")
    func flatPicturesAreSmall() throws {
        let png = PNGWriter.rgb(width: 1024, height: 1024) { _, _ in (10, 20, 30) }
        let rawSize = 1024 * (1024 * 3 + 1)
        #expect(png.count < rawSize / 100)
    }

    @Test("an RGBA picture and a tRNS chunk are both seen as transparency")
    func transparencyIsSeen() throws {
        let rgba = try PNGInfo.parse(PNGWriter.rgba(width: 8, height: 8) { _, _ in (1, 2, 3, 128) })
        #expect(rgba.hasAlpha)
        let trns = try PNGInfo.parse(PNGWriter.rgbWithTransparencyChunk(width: 8, height: 8))
        #expect(!trns.hasAlpha && trns.hasTransparencyChunk)
    }

    @Test("bytes that are not a PNG, a cut file and a corrupt chunk are refused")
    func brokenFilesAreRefused() throws {
        #expect(throws: PNGError.notPNG) { try PNGInfo.parse(Array("GIF89a".utf8)) }
        let png = PNGWriter.rgb(width: 4, height: 4) { _, _ in (0, 0, 0) }
        #expect(throws: PNGError.truncated) { try PNGInfo.parse(Array(png.dropLast(20))) }
        var corrupt = png
        corrupt[20] ^= 0xFF
        #expect(throws: PNGError.badChecksum("IHDR")) { try PNGInfo.parse(corrupt) }
    }

    @Test("the pixel data inflates with zlib to exactly the rows written")
    func pixelDataIsRealDeflate() async throws {
        let width = 300, height = 7
        let png = PNGWriter.rgb(width: width, height: height) { x, y in (UInt8(x % 7), UInt8(y * 3), 200) }
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("pngwriter-\(UUID().uuidString).png")
        try Data(png).write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        let script = """
        import sys, zlib, struct
        d = open(sys.argv[1], 'rb').read()
        i, idat = 8, b''
        while i < len(d):
            n = struct.unpack('>I', d[i:i+4])[0]; t = d[i+4:i+8]
            if t == b'IDAT': idat += d[i+8:i+8+n]
            i += 12 + n
        raw = zlib.decompress(idat)
        w, h = \(width), \(height)
        ok = len(raw) == h * (w * 3 + 1) and all(
            raw[y*(w*3+1)] == 0 and raw[y*(w*3+1)+1+x*3:y*(w*3+1)+4+x*3] == bytes([x % 7, y * 3, 200])
            for y in range(h) for x in range(w))
        print('ok' if ok else 'mismatch')
        """
        // Waited for on a thread of its own: a test's thread is one of the few that async tests share.
        let output = try await onOwnThread {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = ["python3", "-c", script, url.path]
            let pipe = Pipe()
            process.standardOutput = pipe
            try process.run()
            let data = pipe.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return String(decoding: data, as: UTF8.self)
        }
        #expect(output.trimmingCharacters(in: .whitespacesAndNewlines) == "ok")
    }
}
