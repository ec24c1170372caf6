import Foundation

/// A secret the tool reads from the environment: from the variable itself, or — for a mounted
/// Kubernetes secret or a systemd credential — from the file that the same name with `_FILE` names.
/// Never both. An error names the variable and the path, never the value.
public enum EnvironmentSecret {
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
        init(_ description: String) { self.description = description }
    }

    /// The value (a file's without its trailing line breaks); nil when neither is set, or empty.
    public static func value(_ name: String, in environment: [String: String]) throws(Failure) -> String? {
        let direct = environment[name] ?? ""
        let file = name + "_FILE"
        let path = (environment[file] ?? "").trimmingCharacters(in: .whitespaces)
        switch (direct.isEmpty, path.isEmpty) {
        case (true, true):
            return nil
        case (false, false):
            throw Failure("both \(name) and \(file) are set: keep only one")
        case (false, true):
            return direct
        case (true, false):
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder), !isFolder.boolValue,
                  let data = FileManager.default.contents(atPath: path) else {
                throw Failure("\(file) names \(path), which is not a file this process can read: give the path of the file that holds \(name)")
            }
            var text = String(decoding: data, as: UTF8.self)
            while let last = text.unicodeScalars.last, last == "\n" || last == "\r" { text.unicodeScalars.removeLast() }
            guard !text.isEmpty else { throw Failure("\(file) names \(path), which is empty") }
            return text
        }
    }
}
