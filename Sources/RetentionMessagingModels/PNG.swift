/// What Apple's image rules need to know about a PNG, read from its chunks without decoding pixels
/// (so a decompression bomb costs no more than its file size): the chunk structure and every IHDR
/// field are checked as the PNG specification requires, so a file that passes can be decoded.
public struct PNGInfo: Sendable, Hashable {
    public var width: Int
    public var height: Int
    public var bitDepth: Int
    /// 0 grey, 2 RGB, 3 palette, 4 grey + alpha, 6 RGB + alpha.
    public var colorType: Int
    /// A `tRNS` chunk makes some colour transparent even without an alpha channel.
    public var hasTransparencyChunk: Bool

    /// An alpha channel (colour types 4 and 6); Apple refuses those, and `tRNS` too.
    public var hasAlpha: Bool { colorType == 4 || colorType == 6 }

    public static let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    /// The bit depths the PNG specification allows for each colour type.
    public static let allowedBitDepths: [Int: [Int]] = [0: [1, 2, 4, 8, 16], 2: [8, 16], 3: [1, 2, 4, 8], 4: [8, 16], 6: [8, 16]]

    /// Why Apple refuses this picture as `size` (transparency or dimensions), or nil.
    public func appleProblem(for size: ImageSize) -> String? {
        if hasAlpha || hasTransparencyChunk { return "transparency is not allowed" }
        return RetentionLimits.dimensionProblem(width: width, height: height, size: size)
    }

    /// Reads the signature and every chunk, checking each chunk's CRC, the IHDR fields and the
    /// order PNG requires: IHDR first, PLTE before the image data for palette images, at least one
    /// non-empty IDAT with the IDAT chunks consecutive, and IEND last.
    public static func parse(_ bytes: [UInt8]) throws(PNGError) -> PNGInfo {
        guard !bytes.isEmpty else { throw .empty }
        guard bytes.count >= 8, Array(bytes[0..<8]) == signature else { throw .notPNG }
        var offset = 8
        var header: (width: Int, height: Int, bitDepth: Int, colorType: Int)?
        var transparency = false
        var sawPalette = false
        var imageDataChunks = 0
        var imageDataBytes = 0
        var imageDataEnded = false
        var sawEnd = false
        while offset < bytes.count {
            guard offset + 12 <= bytes.count else { throw .truncated }
            let length = Int(readUInt32(bytes, offset))
            let typeBytes = Array(bytes[(offset + 4)..<(offset + 8)])
            guard typeBytes.allSatisfy({ (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) }) else { throw .invalidChunkType }
            let type = String(decoding: typeBytes, as: UTF8.self)
            guard length <= 0x7FFF_FFFF, length <= bytes.count - offset - 12 else { throw .truncated }
            let dataStart = offset + 8
            let stored = readUInt32(bytes, dataStart + length)
            guard CRC32.checksum(bytes[(offset + 4)..<(dataStart + length)]) == stored else { throw .badChecksum(type) }
            if header == nil && type != "IHDR" { throw .missingHeader }
            if imageDataChunks > 0 && type != "IDAT" { imageDataEnded = true }
            switch type {
            case "IHDR":
                guard header == nil, length == 13 else { throw .missingHeader }
                header = try readHeader(bytes, dataStart)
            case "PLTE":
                guard imageDataChunks == 0 else { throw .misplacedChunk("PLTE", "before the image data") }
                guard length > 0, length % 3 == 0, length <= 768 else { throw .invalidPalette }
                sawPalette = true
            case "IDAT":
                guard !imageDataEnded else { throw .misplacedChunk("IDAT", "in one consecutive run") }
                if header?.colorType == 3 && !sawPalette { throw .missingPalette }
                imageDataChunks += 1
                imageDataBytes += length
            case "tRNS":
                guard imageDataChunks == 0 else { throw .misplacedChunk("tRNS", "before the image data") }
                transparency = true
            case "IEND":
                guard length == 0 else { throw .invalidEnd }
                sawEnd = true
            default:
                // An unknown critical chunk (upper-case first letter) means the file cannot be read.
                if (0x41...0x5A).contains(typeBytes[0]) { throw .unknownCriticalChunk(type) }
            }
            offset = dataStart + length + 4
            if sawEnd { break }
        }
        guard let header else { throw .missingHeader }
        guard imageDataChunks > 0 else { throw .missingImageData }
        guard imageDataBytes > 0 else { throw .emptyImageData }
        guard sawEnd else { throw .truncated }
        guard offset == bytes.count else { throw .dataAfterEnd }
        return PNGInfo(width: header.width, height: header.height, bitDepth: header.bitDepth,
                       colorType: header.colorType, hasTransparencyChunk: transparency)
    }

    private static func readHeader(_ bytes: [UInt8], _ start: Int) throws(PNGError) -> (width: Int, height: Int, bitDepth: Int, colorType: Int) {
        let width = Int(readUInt32(bytes, start)), height = Int(readUInt32(bytes, start + 4))
        let bitDepth = Int(bytes[start + 8]), colorType = Int(bytes[start + 9])
        guard (1...0x7FFF_FFFF).contains(width) else { throw .invalidHeader("width \(width) is outside 1–2147483647") }
        guard (1...0x7FFF_FFFF).contains(height) else { throw .invalidHeader("height \(height) is outside 1–2147483647") }
        guard let depths = allowedBitDepths[colorType] else {
            throw .invalidHeader("colour type \(colorType) does not exist (PNG has 0, 2, 3, 4 and 6)")
        }
        guard depths.contains(bitDepth) else {
            throw .invalidHeader("bit depth \(bitDepth) is not allowed for colour type \(colorType) (allowed: \(depths.map(String.init).joined(separator: ", ")))")
        }
        guard bytes[start + 10] == 0 else { throw .invalidHeader("compression method \(bytes[start + 10]) does not exist (only 0)") }
        guard bytes[start + 11] == 0 else { throw .invalidHeader("filter method \(bytes[start + 11]) does not exist (only 0)") }
        guard bytes[start + 12] <= 1 else { throw .invalidHeader("interlace method \(bytes[start + 12]) does not exist (0 or 1)") }
        return (width, height, bitDepth, colorType)
    }

    private static func readUInt32(_ bytes: [UInt8], _ offset: Int) -> UInt32 {
        UInt32(bytes[offset]) << 24 | UInt32(bytes[offset + 1]) << 16 | UInt32(bytes[offset + 2]) << 8 | UInt32(bytes[offset + 3])
    }
}

public enum PNGError: Error, Sendable, Hashable, CustomStringConvertible {
    case empty
    case notPNG
    case truncated
    case missingHeader
    case badChecksum(String)
    case invalidChunkType
    /// Which IHDR field is wrong, and why.
    case invalidHeader(String)
    case missingPalette
    case invalidPalette
    case missingImageData
    case emptyImageData
    case misplacedChunk(String, String)
    case unknownCriticalChunk(String)
    case invalidEnd
    case dataAfterEnd

    public var description: String {
        switch self {
        case .empty: "the file is empty (0 bytes)"
        case .notPNG: "not a PNG file (the PNG signature is missing)"
        case .truncated: "the PNG file is truncated"
        case .missingHeader: "the PNG file has no valid IHDR chunk first"
        case .badChecksum(let chunk): "the PNG chunk \(chunk) is corrupt (CRC mismatch)"
        case .invalidChunkType: "the PNG file has a chunk whose type is not four ASCII letters"
        case .invalidHeader(let why): "the PNG header (IHDR) is invalid: \(why)"
        case .missingPalette: "the PNG file uses a palette (colour type 3) but has no PLTE chunk before its image data"
        case .invalidPalette: "the PNG palette (PLTE) is malformed"
        case .missingImageData: "the PNG file has no image data (IDAT chunk)"
        case .emptyImageData: "the PNG file's image data (IDAT) is empty"
        case .misplacedChunk(let chunk, let rule): "the PNG chunk \(chunk) is out of place (it must come \(rule))"
        case .unknownCriticalChunk(let chunk): "the PNG file has an unknown critical chunk \(chunk), so it cannot be decoded"
        case .invalidEnd: "the PNG end chunk (IEND) is malformed"
        case .dataAfterEnd: "the PNG file has data after its end chunk (IEND)"
        }
    }
}

/// Writes real, small PNG files (8-bit RGB or RGBA), for `init`, tests and benchmarks.
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

enum CRC32 {
    static let table: [UInt32] = (0..<256).map { index in
        var value = UInt32(index)
        for _ in 0..<8 { value = value & 1 == 1 ? 0xEDB8_8320 ^ (value >> 1) : value >> 1 }
        return value
    }

    static func checksum(_ bytes: ArraySlice<UInt8>) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes { crc = table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
        return crc ^ 0xFFFF_FFFF
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
