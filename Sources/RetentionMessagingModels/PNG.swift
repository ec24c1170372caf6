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

/// The CRC-32 of PNG chunks (ISO 3309), which the reader checks and test support writes.
public enum CRC32 {
    static let table: [UInt32] = (0..<256).map { index in
        var value = UInt32(index)
        for _ in 0..<8 { value = value & 1 == 1 ? 0xEDB8_8320 ^ (value >> 1) : value >> 1 }
        return value
    }

    public static func checksum(_ bytes: ArraySlice<UInt8>) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes { crc = table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
        return crc ^ 0xFFFF_FFFF
    }
}
