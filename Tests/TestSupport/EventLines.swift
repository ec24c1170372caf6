public import Foundation

/// Every NDJSON line under `folder`/`prefix` (segments of the event layout), each parsed as a JSON
/// object, in path order: what a test reads back after a recorder stored its events.
public func eventLines(under folder: URL, prefix: String) throws -> [[String: Any]] {
    var paths: [String] = []
    let walker = FileManager.default.enumerator(atPath: folder.path)
    while let relative = walker?.nextObject() as? String {
        if relative.hasPrefix(prefix), relative.hasSuffix(".ndjson"), !(relative as NSString).lastPathComponent.hasPrefix(".") {
            paths.append(relative)
        }
    }
    var lines: [[String: Any]] = []
    for path in paths.sorted() {
        let data = FileManager.default.contents(atPath: folder.appendingPathComponent(path).path) ?? Data()
        for line in data.split(separator: 0x0A) {
            guard let object = try JSONSerialization.jsonObject(with: Data(line)) as? [String: Any] else {
                throw CocoaError(.propertyListReadCorrupt, userInfo: [NSLocalizedDescriptionKey: "\(path): a line that is not a JSON object"])
            }
            lines.append(object)
        }
    }
    return lines
}
