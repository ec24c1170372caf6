import Foundation
public import StateLocations
import Crypto

/// A state document in a local file; needs no setup.
///
/// Writes go to a temporary file in the same folder, are flushed to disk and renamed over the
/// document, so a reader sees the old or the new document, never half of one. A lock file beside it
/// (`.<name>.lock`, held with `flock`) makes check-and-replace one step, so of two writers holding
/// the same version exactly one succeeds. The version is the SHA-256 of the file's bytes.
public struct FileStateStore: StateDocumentStore {
    public let location: StateLocation
    public let owner: StateOwner
    public let path: String
    /// How long a writer waits for another one's lock before giving up.
    public var lockTimeout: Double = 30
    /// How many replaced versions the history folder keeps.
    public var historyLimit = FileStateStore.defaultHistoryLimit

    public init(path: String, owner: StateOwner) {
        self.path = path
        self.owner = owner
        location = .file(path: path)
    }

    public func read() async throws(StateStoreError) -> StateRead {
        guard let data = try currentBytes() else { return .empty }
        return try decode(data)
    }

    public func poll(since version: StateVersion) async throws(StateStoreError) -> StatePoll {
        guard let data = try currentBytes() else { return .changed(.empty) }
        if Self.version(of: data) == version { return .unchanged }
        return .changed(try decode(data))
    }

    public func write(_ document: StateDocument, condition: StateWriteCondition) async throws(StateStoreError) -> StateVersion {
        if let reason = owner.mismatch(with: document.owner) {
            throw StateStoreError(.wrongOwner, store: path, "refusing to write a document that is not this environment's: \(reason)")
        }
        let data: Data
        do {
            data = try document.encoded()
        } catch {
            throw StateStoreError(.io, store: path, "cannot encode the state document: \(error)")
        }
        let directory = (path as NSString).deletingLastPathComponent
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw StateStoreError(.io, store: path, "cannot create the folder \(directory): \(error.localizedDescription)")
        }
        let lock = try await acquireLock(directory: directory)
        defer { close(lock) }

        let current = try currentBytes()
        switch condition {
        case .createOnly:
            if let current {
                throw StateStoreError(.conflict, store: path, "another writer\(Self.writer(of: current)) created the state document first; read it again and re-plan")
            }
        case .ifMatch(let expected):
            guard let current else {
                throw StateStoreError(.conflict, store: path, "the state document was removed since it was read; read it again and re-plan")
            }
            guard Self.version(of: current) == expected else {
                throw StateStoreError(.conflict, store: path, "another writer\(Self.writer(of: current)) changed the state document since it was read; read it again and re-plan")
            }
        }
        if let current { try keep(previous: current) }
        try replace(with: data, directory: directory)
        return Self.version(of: data)
    }

    /// ` (https://github.com/…/runs/42)`: who wrote the version that won, when it says.
    static func writer(of data: Data) -> String {
        (try? StateDocument.decode(data, expecting: nil).document.writtenBy).flatMap { $0 }.map { " (\($0))" } ?? ""
    }

    static func version(of data: Data) -> StateVersion {
        StateVersion("sha256:" + Digest.sha256Hex(Array(data)))
    }

    private func decode(_ data: Data) throws(StateStoreError) -> StateRead {
        do {
            let (document, source) = try StateDocument.decode(data, expecting: owner)
            return StateRead(document: document, version: Self.version(of: data),
                             migratedFrom: source == .legacySnapshot ? path : nil)
        } catch {
            throw StateStoreError(error, store: path)
        }
    }

    /// The file's bytes, or nil when there is no file; anything else that is not a readable regular
    /// file is an error, never "nothing published".
    private func currentBytes() throws(StateStoreError) -> Data? {
        var status = stat()
        if lstat(path, &status) != 0 {
            let code = errno
            if code == ENOENT { return nil }
            throw StateStoreError(code == EACCES ? .accessDenied : .io, store: path, "cannot read it: \(String(cString: strerror(code)))")
        }
        guard (status.st_mode & S_IFMT) == S_IFREG else {
            throw StateStoreError(.io, store: path, "it is not a regular file (a folder, link or device); point the state store at a file")
        }
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            let code = errno
            if code == ENOENT { return nil }
            throw StateStoreError(code == EACCES ? .accessDenied : .io, store: path, "cannot open it: \(String(cString: strerror(code)))")
        }
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        do {
            return try handle.readToEnd() ?? Data()
        } catch {
            throw StateStoreError(.io, store: path, "cannot read it: \(error.localizedDescription)")
        }
    }

    private func acquireLock(directory: String) async throws(StateStoreError) -> Int32 {
        let lockPath = directory + "/." + (path as NSString).lastPathComponent + ".lock"
        let descriptor = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            throw StateStoreError(.io, store: path, "cannot open the lock file \(lockPath): \(String(cString: strerror(errno)))")
        }
        // A deadline on the monotonic clock: a wall clock set back must not stretch the wait.
        let deadline = ContinuousClock.now + .milliseconds(Int64((lockTimeout * 1000).rounded()))
        while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            let code = errno
            guard code == EWOULDBLOCK || code == EINTR else {
                close(descriptor)
                throw StateStoreError(.io, store: path, "cannot lock \(lockPath): \(String(cString: strerror(code)))")
            }
            guard ContinuousClock.now < deadline else {
                close(descriptor)
                throw StateStoreError(.conflict, store: path, "another writer has held \(lockPath) for \(Int(lockTimeout)) s; try again when it has finished")
            }
            try? await Task.sleep(nanoseconds: 5_000_000)
        }
        return descriptor
    }

    private func replace(with data: Data, directory: String) throws(StateStoreError) {
        let temporary = directory + "/." + (path as NSString).lastPathComponent + "." + UUID().uuidString + ".tmp"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            throw StateStoreError(.io, store: path, "cannot create \(temporary): \(String(cString: strerror(errno)))")
        }
        var failure: String?
        data.withUnsafeBytes { buffer in
            guard let base = buffer.baseAddress else { return }
            var offset = 0
            while offset < buffer.count {
                let written = Foundation.write(descriptor, base + offset, buffer.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    failure = "cannot write \(temporary): \(String(cString: strerror(errno)))"
                    return
                }
                offset += written
            }
        }
        if failure == nil, fsync(descriptor) != 0 { failure = "cannot flush \(temporary): \(String(cString: strerror(errno)))" }
        close(descriptor)
        if failure == nil, rename(temporary, path) != 0 { failure = "cannot replace the state document: \(String(cString: strerror(errno)))" }
        if let failure {
            unlink(temporary)
            throw StateStoreError(.io, store: path, failure)
        }
        // The rename itself is durable only once the folder is flushed.
        let folder = open(directory, O_RDONLY | O_CLOEXEC)
        if folder >= 0 {
            _ = fsync(folder)
            close(folder)
        }
    }
}
