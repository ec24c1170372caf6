public import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A site of static files: the preview of the messages, and the preview of what a plan changes.
public protocol StaticSite: Sendable {
    /// Renders each file in turn and hands it over with its path relative to the output folder.
    func forEachFile(_ body: (_ path: String, _ contents: Data) throws -> Void) throws
}

/// Writes a site into its output folder whole or not at all: every file goes into a fresh sibling
/// folder first, which then takes the output folder's place by rename. A reader of the output folder
/// sees the old preview or the new one, never half of one; a failure leaves the old one as it was.
/// An existing folder is replaced only when it is a preview's (it holds `PreviewSite.markerFile`).
public enum PreviewFolder {
    public struct Failure: Error, Sendable, CustomStringConvertible {
        public var description: String
    }

    /// Writes `site` to `folder` (made if missing, its parent too); `displayPath` names it in errors.
    /// Returns how many files and bytes were written.
    @discardableResult
    public static func write(_ site: some StaticSite, to folder: URL, displayPath: String, option: String = "--out") throws(Failure) -> (files: Int, bytes: Int) {
        let manager = FileManager.default
        let folder = folder.standardizedFileURL
        let parent = folder.deletingLastPathComponent()
        let exists = try isPreviousPreview(folder, displayPath: displayPath, option: option)
        do {
            try manager.createDirectory(at: parent, withIntermediateDirectories: true)
        } catch {
            throw Failure(description: "cannot make the folder that holds \(displayPath): \(error.localizedDescription)")
        }
        let token = UUID().uuidString.lowercased()
        let staging = parent.appendingPathComponent(".\(folder.lastPathComponent).new-\(token)", isDirectory: true)
        let retired = parent.appendingPathComponent(".\(folder.lastPathComponent).old-\(token)", isDirectory: true)
        var files = 0, bytes = 0
        do {
            try manager.createDirectory(at: staging, withIntermediateDirectories: true)
            try site.forEachFile { path, contents in
                let file = staging.appendingPathComponent(path)
                try manager.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
                try contents.write(to: file)
                files += 1
                bytes += contents.count
            }
            try Data(PreviewSite.markerText.utf8).write(to: staging.appendingPathComponent(PreviewSite.markerFile))
        } catch {
            try? manager.removeItem(at: staging)
            throw Failure(description: "cannot write the preview beside \(displayPath): \(error.localizedDescription); \(displayPath) is unchanged")
        }
        if exists {
            guard rename(folder.path, retired.path) == 0 else {
                let reason = String(cString: strerror(errno))
                try? manager.removeItem(at: staging)
                throw Failure(description: "cannot move the previous preview \(displayPath) aside: \(reason); \(displayPath) is unchanged")
            }
        }
        guard rename(staging.path, folder.path) == 0 else {
            let reason = String(cString: strerror(errno))
            if exists { _ = rename(retired.path, folder.path) }
            try? manager.removeItem(at: staging)
            throw Failure(description: "cannot move the new preview into \(displayPath): \(reason); \(displayPath) is unchanged")
        }
        if exists { try? manager.removeItem(at: retired) }
        return (files, bytes)
    }

    /// Removes a previous preview at `folder`, so that nothing stale is left where a preview would
    /// be. Anything else there — a file, a folder that is not a preview's — is left alone. Returns
    /// whether there was a preview to remove.
    @discardableResult
    public static func removePrevious(at folder: URL, displayPath: String) throws(Failure) -> Bool {
        let folder = folder.standardizedFileURL
        guard (try? isPreviousPreview(folder, displayPath: displayPath, option: "")) == true else { return false }
        let retired = folder.deletingLastPathComponent()
            .appendingPathComponent(".\(folder.lastPathComponent).old-\(UUID().uuidString.lowercased())", isDirectory: true)
        guard rename(folder.path, retired.path) == 0 else {
            throw Failure(description: "cannot remove the previous preview \(displayPath): \(String(cString: strerror(errno)))")
        }
        try? FileManager.default.removeItem(at: retired)
        return true
    }

    /// Whether `folder` exists as a previous preview (false when it does not exist); a file, or a
    /// folder without the marker, is refused.
    static func isPreviousPreview(_ folder: URL, displayPath: String, option: String) throws(Failure) -> Bool {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: folder.path, isDirectory: &isDirectory) else { return false }
        guard isDirectory.boolValue else {
            throw Failure(description: "\(displayPath) is a file, not a folder; choose another \(option)")
        }
        guard FileManager.default.fileExists(atPath: folder.appendingPathComponent(PreviewSite.markerFile).path) else {
            throw Failure(description: "\(displayPath) exists and is not a previous preview (it has no \(PreviewSite.markerFile)); refusing to replace it — choose another \(option), or remove the folder")
        }
        return true
    }
}
