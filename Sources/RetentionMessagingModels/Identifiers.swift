/// Facts about Apple's API that the client, the emulator and the commands all need, written once.
public enum RetentionMessagingPaths {
    /// The path every Retention Messaging endpoint starts with, on Apple's hosts and the emulator's.
    public static let base = "/inApps/v1/messaging"
}

/// `8-4-4-4-12` hexadecimal digits: the shape of message and image identifiers and of issuer ids.
public enum UUIDText {
    public static func isUUID(_ text: String) -> Bool {
        let scalars = Array(text.unicodeScalars)
        guard scalars.count == 36 else { return false }
        for (index, scalar) in scalars.enumerated() {
            if [8, 13, 18, 23].contains(index) {
                guard scalar == "-" else { return false }
            } else {
                guard scalar.properties.isASCIIHexDigit else { return false }
            }
        }
        return true
    }
}
