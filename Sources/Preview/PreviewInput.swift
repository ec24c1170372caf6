public import Manifests
public import RetentionMessagingModels

/// What a preview shows: the manifests, and for each environment what its state document recorded
/// about App Review. The preview never asks Apple: review states come from the state store or not at all.
public struct PreviewInput: Sendable {
    public var manifests: ManifestSet
    /// In the order the index shows them.
    public var environments: [EnvironmentReview]

    public init(manifests: ManifestSet, environments: [EnvironmentReview]) {
        self.manifests = manifests
        self.environments = environments
    }
}

/// One environment's review states, as far as they could be read.
public struct EnvironmentReview: Sendable {
    public enum Source: Sendable, Hashable {
        /// Read from the state document in this store (a description fit to print: no absolute path).
        case stateDocument(String)
        /// The store holds no state document yet: nothing was uploaded by this tool.
        case emptyStore(String)
        /// The environment names no state store.
        case notConfigured
        /// The store could not be read; why.
        case unreadable(String)
        /// `--offline`: the store was not read.
        case notRead
    }

    public var environment: Environment
    public var source: Source
    /// By message name, then locale; a localization missing here has no record.
    public var states: [String: [String: ReviewMark]]

    public init(environment: Environment, source: Source, states: [String: [String: ReviewMark]] = [:]) {
        self.environment = environment
        self.source = source
        self.states = states
    }

    /// Whether states were read, so a missing entry means "not uploaded" rather than "unknown".
    var wasRead: Bool {
        switch source {
        case .stateDocument, .emptyStore: true
        case .notConfigured, .unreadable, .notRead: false
        }
    }
}

/// The review state of one message localization: the message's own state as the state document last
/// recorded it, and what holds it back when an image it shows is not approved.
public struct ReviewMark: Sendable, Hashable {
    /// `APPROVED`, `PENDING`, `REJECTED` (or a state Apple adds later).
    public var state: String
    /// Images the message shows whose recorded state is not `APPROVED`, as `name STATE`, sorted.
    public var imagesNotApproved: [String]

    public init(state: String, imagesNotApproved: [String] = []) {
        self.state = state
        self.imagesNotApproved = imagesNotApproved
    }
}
