/// Apple's two separate stores. Content uploaded to one does not exist in the other.
public enum Environment: String, Sendable, Hashable, Codable, CaseIterable, Comparable {
    case sandbox
    case production

    /// The spelling Apple uses in realtime payloads: `Sandbox` / `Production`.
    public var appleName: String { self == .sandbox ? "Sandbox" : "Production" }

    public init?(appleName: String) {
        switch appleName {
        case "Sandbox": self = .sandbox
        case "Production": self = .production
        default: return nil
        }
    }

    public static func < (lhs: Environment, rhs: Environment) -> Bool {
        lhs == .sandbox && rhs == .production
    }
}
