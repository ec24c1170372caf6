public import Basics
import Crypto
public import RetentionMessagingModels

/// `kind: Image`.
public struct ImageManifest: Sendable, Hashable {
    public var name: String
    /// The path as written, relative to the manifest file's directory.
    public var file: String
    public var size: ImageSize
    /// The PNG file's bytes (empty if the file could not be read; the loader reports that).
    public let png: [UInt8]
    /// Lowercase hex SHA-256 of `png`, computed once when the manifest is made; empty when `png` is.
    public let sha256: String
    public var location: SourceLocation
    /// Where individual fields were written, so diagnostics point at the exact value; a missing
    /// entry falls back to `location`. Typed, so a misspelt field cannot point at the wrong line.
    public var fieldLocations: [Field: SourceLocation] = [:]

    public enum Field: Hashable, Sendable {
        case name, file, size
    }

    public init(name: String, file: String, size: ImageSize, png: [UInt8], location: SourceLocation) {
        self.init(name: name, file: file, size: size, png: png, sha256: "", location: location)
    }

    /// For callers that already hold the PNG's digest; an empty `sha256` is computed here.
    public init(name: String, file: String, size: ImageSize, png: [UInt8], sha256: String, location: SourceLocation) {
        self.name = name
        self.file = file
        self.size = size
        self.png = png
        self.sha256 = sha256.isEmpty && !png.isEmpty ? Digest.sha256Hex(png) : sha256
        self.location = location
    }
}
