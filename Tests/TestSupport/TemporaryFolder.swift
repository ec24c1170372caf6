public import Foundation

/// A fresh, empty folder of its own under the system's temporary folder, named `<name>-<UUID>` so
/// leftovers say which test made them; the test removes it when done.
public func temporaryFolder(_ name: String) throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("\(name)-\(UUID().uuidString)", isDirectory: true)
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}
