import RetentionMessagingModels

// Writing PNG files is for tests and benchmarks only: the product reads images and never makes one.

/// Writes real, small PNG files (8-bit RGB or RGBA), for tests and benchmarks.
/// Rows and runs that repeat compress to almost nothing; noisy pictures stay large.
public enum PNGWriter {
    public static func rgb(width: Int, height: Int, pixel: (_ x: Int, _ y: Int) -> (UInt8, UInt8, UInt8)) -> [UInt8] {
        encode(width: width, height: height, channels: 3) { x, y in
            let (r, g, b) = pixel(x, y)
            return [r, g, b]
        }
    }

    public static func rgba(width: Int, height: Int, pixel: (_ x: Int, _ y: Int) -> (UInt8, UInt8, UInt8, UInt8)) -> [UInt8] {
        encode(width: width, height: height, channels: 4) { x, y in
            let (r, g, b, a) = pixel(x, y)
            return [r, g, b, a]
        }
    }

    /// An RGB PNG that also carries a `tRNS` chunk (transparent colour), which Apple refuses.
    public static func rgbWithTransparencyChunk(width: Int, height: Int) -> [UInt8] {
        var png = rgb(width: width, height: height) { _, _ in (0, 0, 0) }
        // PNG requires tRNS before the image data: right after the 8-byte signature and 25-byte IHDR.
        png.insert(contentsOf: chunk("tRNS", [0, 0, 0, 0, 0, 0]), at: 33)
        return png
    }

    private static func encode(width: Int, height: Int, channels: Int, pixel: (Int, Int) -> [UInt8]) -> [UInt8] {
        let stride = width * channels + 1
        var raw = [UInt8]()
        raw.reserveCapacity(stride * height)
        for y in 0..<height {
            raw.append(0)
            for x in 0..<width { raw.append(contentsOf: pixel(x, y)) }
        }
        var header = [UInt8]()
        header += bigEndian(UInt32(width)) + bigEndian(UInt32(height))
        header += [8, channels == 4 ? 6 : 2, 0, 0, 0]
        return PNGInfo.signature + chunk("IHDR", header) + chunk("IDAT", Deflate.zlib(raw, rowStride: stride)) + chunk("IEND", [])
    }

    private static func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        let typeAndData = Array(type.utf8) + data
        return bigEndian(UInt32(data.count)) + typeAndData + bigEndian(CRC32.checksum(typeAndData[...]))
    }

    private static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }
}

/// A minimal deflate encoder (one fixed-Huffman block) whose only matches are runs at short
/// distances and whole repeated rows: enough for the flat pictures tests and benchmarks need.
enum Deflate {
    static func zlib(_ data: [UInt8], rowStride: Int) -> [UInt8] {
        var bits = BitWriter()
        bits.write(1, count: 1)
        bits.write(1, count: 2)
        let distances = [1, 2, 3, 4, rowStride].filter { $0 <= 32768 }
        var index = 0
        while index < data.count {
            var bestLength = 0
            var bestDistance = 0
            for distance in distances where distance <= index {
                var length = 0
                while length < 258 && index + length < data.count && data[index + length] == data[index + length - distance] {
                    length += 1
                }
                if length > bestLength { (bestLength, bestDistance) = (length, distance) }
            }
            if bestLength >= 3 {
                bits.writeLength(bestLength)
                bits.writeDistance(bestDistance)
                index += bestLength
            } else {
                bits.writeLiteral(Int(data[index]))
                index += 1
            }
        }
        bits.writeLiteral(256)
        var out: [UInt8] = [0x78, 0x01]
        out += bits.bytes()
        var a: UInt32 = 1
        var b: UInt32 = 0
        for byte in data {
            a = (a + UInt32(byte)) % 65521
            b = (b + a) % 65521
        }
        let adler = b << 16 | a
        out += [UInt8(adler >> 24), UInt8(adler >> 16 & 0xFF), UInt8(adler >> 8 & 0xFF), UInt8(adler & 0xFF)]
        return out
    }

    static let lengthBases = [3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258]
    static let lengthExtra = [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0]
    static let distanceBases = [1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537,
                                2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577]
    static let distanceExtra = [0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13]

    struct BitWriter {
        private var buffer: [UInt8] = []
        private var current: UInt32 = 0
        private var filled = 0

        /// Writes `count` bits of `value`, least significant first (deflate's order for extra bits).
        mutating func write(_ value: Int, count: Int) {
            for bit in 0..<count {
                current |= UInt32((value >> bit) & 1) << filled
                filled += 1
                if filled == 8 {
                    buffer.append(UInt8(current))
                    current = 0
                    filled = 0
                }
            }
        }

        /// Huffman codes go most significant bit first.
        mutating func writeCode(_ code: Int, count: Int) {
            for bit in stride(from: count - 1, through: 0, by: -1) { write((code >> bit) & 1, count: 1) }
        }

        mutating func writeLiteral(_ symbol: Int) {
            switch symbol {
            case 0...143: writeCode(0x30 + symbol, count: 8)
            case 144...255: writeCode(0x190 + symbol - 144, count: 9)
            case 256...279: writeCode(symbol - 256, count: 7)
            default: writeCode(0xC0 + symbol - 280, count: 8)
            }
        }

        mutating func writeLength(_ length: Int) {
            let index = Deflate.lengthBases.lastIndex { $0 <= length }!
            writeLiteral(257 + index)
            write(length - Deflate.lengthBases[index], count: Deflate.lengthExtra[index])
        }

        mutating func writeDistance(_ distance: Int) {
            let index = Deflate.distanceBases.lastIndex { $0 <= distance }!
            writeCode(index, count: 5)
            write(distance - Deflate.distanceBases[index], count: Deflate.distanceExtra[index])
        }

        func bytes() -> [UInt8] { filled > 0 ? buffer + [UInt8(current)] : buffer }
    }
}
