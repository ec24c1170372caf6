import Basics
import Crypto
import Foundation
import RetentionMessagingModels
import StateLocations
import YAML

// What every kind's conversion uses: where keys were written, and the words for an unknown
// environment. Each kind's own conversion is in its folder under Kinds/.

extension Loader {
    static func unknownEnvironment(_ name: String, at location: SourceLocation) -> Diagnostic {
        let names = Environment.allCases.map(\.rawValue)
        let suggestion = names.first { !name.isEmpty && $0.hasPrefix(name.lowercased()) } ?? NearMiss.best(name, in: names, maxDistance: 4)
        return .error("unknown-environment", at: location, "unknown environment '\(name)'",
                      hint: suggestion.map { "did you mean '\($0)'? environments are sandbox and production" }
                        ?? "environments are sandbox and production")
    }

    /// Where each key of the mapping at `key` was written.
    static func keyLocations(_ node: YAMLNode, _ key: String) -> [String: SourceLocation] {
        guard case .mapping(let pairs)? = node[key]?.kind else { return [:] }
        var locations: [String: SourceLocation] = [:]
        for pair in pairs {
            if let text = pair.key.scalar?.text, locations[text] == nil { locations[text] = pair.key.location }
        }
        return locations
    }
}
