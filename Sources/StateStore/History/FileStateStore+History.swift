import Foundation

/// The file store keeps each replaced version in a folder beside the document
/// (`production.json` → `production.history/000041.json`, named by the version's serial), the
/// newest `historyLimit` of them.
extension FileStateStore: StateHistoryKeeping {
    public static let defaultHistoryLimit = 100

    public var historyDirectory: String {
        (path.hasSuffix(".json") ? String(path.dropLast(5)) : path) + ".history"
    }

    public func versions() async throws(StateStoreError) -> [StoredStateVersion] {
        var versions: [StoredStateVersion] = []
        for (_, file) in try historyFiles() {
            let data: Data
            do {
                data = try Data(contentsOf: URL(fileURLWithPath: file))
            } catch {
                throw StateStoreError(.io, store: file, "cannot read this kept version: \(error.localizedDescription)")
            }
            do {
                let document = try StateDocument.decode(data, expecting: owner).document
                versions.append(StoredStateVersion(number: document.versionNumber, document: document, current: false))
            } catch {
                throw StateStoreError(error, store: file)
            }
        }
        if let document = try await read().document {
            versions.append(StoredStateVersion(number: document.versionNumber, document: document, current: true))
        }
        return versions
    }

    /// Copies the bytes about to be replaced into the history folder and drops the oldest beyond the
    /// limit. Called under the write lock; a failure here stops the write, so no version goes unkept.
    func keep(previous data: Data) throws(StateStoreError) {
        let serial = (try? StateDocument.decode(data, expecting: nil).document.versionNumber) ?? 0
        let directory = historyDirectory
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            let name = String(format: "%06d.json", serial)
            let temporary = directory + "/." + name + "." + UUID().uuidString + ".tmp"
            try data.write(to: URL(fileURLWithPath: temporary))
            guard rename(temporary, directory + "/" + name) == 0 else {
                unlink(temporary)
                throw StateStoreError(.io, store: path, "cannot keep the previous version in \(directory): \(String(cString: strerror(errno)))")
            }
        } catch let error as StateStoreError {
            throw error
        } catch {
            throw StateStoreError(.io, store: path, "cannot keep the previous version in \(directory): \(error.localizedDescription)")
        }
        let files = try historyFiles()
        for (_, file) in files.dropLast(max(1, historyLimit)) { unlink(file) }
    }

    /// The kept versions' files, oldest first.
    private func historyFiles() throws(StateStoreError) -> [(Int, String)] {
        let directory = historyDirectory
        guard FileManager.default.fileExists(atPath: directory) else { return [] }
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: directory)
        } catch {
            throw StateStoreError(.io, store: directory, "cannot list the kept versions: \(error.localizedDescription)")
        }
        return names.compactMap { name -> (Int, String)? in
            guard name.hasSuffix(".json"), !name.hasPrefix("."), let number = Int(name.dropLast(5)) else { return nil }
            return (number, directory + "/" + name)
        }.sorted { $0.0 < $1.0 }
    }
}
