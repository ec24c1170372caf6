public import Foundation
public import StateStore
import Synchronization

/// Why the event store could not take a segment; the recorder keeps the segment in its spool and
/// tries again.
public struct EventStoreError: Error, Sendable, CustomStringConvertible {
    public var description: String

    public init(_ description: String) {
        self.description = description
    }
}

/// Where finished segments go: a folder or an S3 prefix, beside the state.
///
/// `put` is called from the recorder's own thread (never from Swift's concurrency pool) and may block.
/// A segment is stored all or nothing under a name no other writer uses, so storing it twice (a retry
/// after a lost answer) is harmless.
public protocol EventSink: Sendable {
    /// For messages: `/srv/state`, `s3://bucket/prefix`.
    var location: String { get }
    /// Stores `bytes` at `path`, relative to the root (`events/v1/decisions/…/<writer>-<seq>.ndjson`).
    func put(_ path: String, _ bytes: [UInt8]) throws(EventStoreError)
}

/// Segments in a folder: written under a hidden temporary name, flushed to disk, then renamed, so a
/// reader sees whole segments only.
public struct FolderEventSink: EventSink {
    public let root: URL

    public init(root: URL) {
        self.root = root
    }

    public var location: String { root.path }

    public func put(_ path: String, _ bytes: [UInt8]) throws(EventStoreError) {
        do {
            try AtomicFile.write(bytes, to: root.appendingPathComponent(path))
        } catch {
            throw EventStoreError("cannot write \(root.appendingPathComponent(path).path): \(error.description)")
        }
    }
}

/// Writes a file whole: a hidden temporary file in the same folder, fsync, rename.
enum AtomicFile {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    static func write(_ bytes: [UInt8], to url: URL, sync: Bool = true) throws(Failure) {
        let folder = url.deletingLastPathComponent()
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        } catch {
            throw Failure(description: "cannot create the folder \(folder.path): \(WriteProblem.reason(writing: url, error: error))")
        }
        let temporary = folder.appendingPathComponent(".\(url.lastPathComponent).\(UInt32.random(in: 0 ... .max)).tmp")
        let descriptor = open(temporary.path, O_WRONLY | O_CREAT | O_EXCL, 0o644)
        guard descriptor >= 0 else { throw Failure(description: String(cString: strerror(errno))) }
        var written = 0
        let ok = bytes.withUnsafeBytes { raw -> Bool in
            while written < raw.count {
                let result = Foundation.write(descriptor, raw.baseAddress! + written, raw.count - written)
                if result < 0 {
                    if errno == EINTR { continue }
                    return false
                }
                written += result
            }
            return !sync || fsync(descriptor) == 0
        }
        let reason = ok ? "" : String(cString: strerror(errno))
        close(descriptor)
        guard ok, rename(temporary.path, url.path) == 0 else {
            let failure = ok ? String(cString: strerror(errno)) : reason
            unlink(temporary.path)
            throw Failure(description: failure)
        }
    }
}

/// Segments in the object store beside the state (a folder, or the state's S3 prefix).
public struct ObjectStoreEventSink: EventSink {
    public let store: any BlockingObjectStore

    public init(store: any BlockingObjectStore) {
        self.store = store
    }

    public var location: String { store.location }

    /// Blocks the calling thread (the recorder's own, never a pool thread) until the store answers;
    /// the store answers on threads of its own (a file write here, libcurl's transfer threads for
    /// S3), so recording never waits for Swift's concurrency pool.
    public func put(_ path: String, _ bytes: [UInt8]) throws(EventStoreError) {
        do {
            try store.putWaiting(path, bytes)
        } catch {
            throw EventStoreError(error.description)
        }
    }
}
