public import Basics
import Foundation
public import RetentionMessagingModels
public import Runtime

// The state of one environment of one App, as the state store keeps it: one JSON document with
// sorted keys, snake_case names and a digest, documented in the README ("State"). It never holds a
// secret: no key, no token, no customer data.

public struct StateDocument: Codable, Sendable, Hashable {
    /// Semver: readers accept any 1.x, and ignore fields they do not know (the digest covers them
    /// all). 1.1 adds `defaults_refresh_cursor` and `realtime_url_awaiting_performance_test`; the
    /// optional `serial` and `written_by` came later within 1.1, as fields older readers ignore.
    public static let currentFormatVersion = "1.1"

    public var formatVersion: String
    public var app: StateApp
    public var environment: Environment
    /// The published runtime snapshot (what `serve` answers from); nil until the first publish.
    public var snapshot: RuntimeSnapshot?
    /// Everything the tool uploaded, sorted by identifier.
    public var content: [ContentRecord]
    /// Content the tool did not upload but adopted (`ExternalMessage` manifests, as `import` writes
    /// them): what an apply found Apple holding under a declared identifier, sorted by identifier.
    /// Absent until an apply adopts something (documents written before it existed have none).
    public var adopted: [AdoptedRecord]?
    /// Default messages as last applied, sorted by product then locale.
    public var defaults: [DefaultRecord]
    /// The realtime URL as last applied.
    public var realtimeURL: RealtimeURLRecord?
    /// A production realtime URL Apple refused for want of a passed sandbox performance test
    /// (403 4030026): plans show setting it as waiting until a set succeeds or a test passes.
    public var realtimeURLAwaitingPerformanceTest: RealtimeURLRefusal?
    /// The last performance-test result seen.
    public var performanceTest: PerformanceTestRecord?
    /// Where the next plan's window of re-read defaults starts in the sorted list of recorded
    /// pairs (`--refresh-defaults`); advanced by apply, so every pair is re-read in turn.
    public var defaultsRefreshCursor: Int?
    /// When the writer last changed the document; set by the writer, not by the store.
    public var updatedAt: UTCTime?
    /// Counts the writes of this document (1: the first); set by the writer from the version it
    /// read, so `state history` can number versions. Absent in documents written before it existed.
    public var serial: Int?
    /// The run that wrote this version (a GitHub Actions run URL, else user@host); set by the writer.
    public var writtenBy: StateWriter?
    /// `sha256:<64 lowercase hex>` over the compact canonical JSON of the document with `digest` = "".
    public var digest: String

    public init(app: StateApp, environment: Environment, snapshot: RuntimeSnapshot? = nil, content: [ContentRecord] = [],
                defaults: [DefaultRecord] = [], realtimeURL: RealtimeURLRecord? = nil,
                performanceTest: PerformanceTestRecord? = nil, updatedAt: UTCTime? = nil,
                formatVersion: String = StateDocument.currentFormatVersion, digest: String = "") {
        self.formatVersion = formatVersion
        self.app = app
        self.environment = environment
        self.snapshot = snapshot
        self.content = content
        self.defaults = defaults
        self.realtimeURL = realtimeURL
        self.performanceTest = performanceTest
        self.updatedAt = updatedAt
        self.digest = digest
    }

    /// An empty document for an owner: the starting point of a first publish.
    public init(owner: StateOwner) {
        self.init(app: StateApp(bundleId: owner.bundleId, appAppleId: owner.appAppleId), environment: owner.environment)
    }

    public var owner: StateOwner {
        StateOwner(bundleId: app.bundleId, appAppleId: app.appAppleId, environment: environment)
    }

    enum CodingKeys: String, CodingKey {
        case formatVersion = "format_version", app, environment, snapshot = "published_snapshot", content, defaults
        case realtimeURL = "realtime_url", performanceTest = "performance_test", updatedAt = "updated_at", digest
        case defaultsRefreshCursor = "defaults_refresh_cursor"
        case realtimeURLAwaitingPerformanceTest = "realtime_url_awaiting_performance_test"
        case serial, writtenBy = "written_by", adopted
    }
}

/// The App a document belongs to.
public struct StateApp: Codable, Sendable, Hashable {
    public var bundleId: String
    public var appAppleId: Int64?

    public init(bundleId: String, appAppleId: Int64?) {
        self.bundleId = bundleId
        self.appAppleId = appAppleId
    }

    enum CodingKeys: String, CodingKey { case bundleId = "bundle_id", appAppleId = "app_apple_id" }
}

/// Who may read and write a document: one environment of one App. A store refuses a document
/// that names anyone else.
public struct StateOwner: Sendable, Hashable, CustomStringConvertible {
    public var bundleId: String
    public var appAppleId: Int64?
    public var environment: Environment

    public init(bundleId: String, appAppleId: Int64?, environment: Environment) {
        self.bundleId = bundleId
        self.appAppleId = appAppleId
        self.environment = environment
    }

    public var description: String {
        "\(bundleId)\(appAppleId.map { " (appAppleId \($0))" } ?? "") \(environment.rawValue)"
    }

    /// Why a document does not belong to this owner, or nil when it does. An unknown appAppleId on
    /// either side is no conflict: older manifests do not declare one.
    public func mismatch(with document: StateOwner) -> String? {
        if document.bundleId != bundleId || document.environment != environment {
            return "it belongs to \(document.bundleId) \(document.environment.rawValue), not \(bundleId) \(environment.rawValue)"
        }
        if let mine = appAppleId, let theirs = document.appAppleId, mine != theirs {
            return "it belongs to appAppleId \(theirs), not \(mine)"
        }
        return nil
    }
}

/// One message or image the tool uploaded, and what review said about it over time.
public struct ContentRecord: Codable, Sendable, Hashable {
    public typealias Kind = ContentKind

    /// Lowercase UUID, as derived by `retention-sync id`.
    public var identifier: String
    public var kind: Kind
    /// The logical name in the manifests (a message's name, an image's names joined by ", ").
    public var name: String
    /// Messages only.
    public var locale: String?
    /// Messages only: the product scope the identifier was derived for.
    public var productScope: String?
    /// The content version the identifier was derived from (a message's digest, an image's size and hash).
    public var contentVersion: String
    /// Messages only: the exact body sent with `PUT /message/{identifier}`, as UTF-8 text.
    public var uploadBody: String?
    /// Images only.
    public var image: ImageFacts?
    public var firstUploadedAt: UTCTime
    /// Review states in the order they were observed; a state is added when it differs from the last one.
    public var reviewStates: [ObservedReviewState]
    /// Pull requests (or other branches) that submitted this content for review before the main
    /// branch used it (`apply --only-uploads --submitted-by`), one entry per submitter with its latest
    /// submission, sorted by submitter; absent when only the main branch uploaded it.
    public var submissions: [ContentSubmission]?
    /// Content pull requests submitted: when an apply of the main branch (any apply but
    /// `--only-uploads`) first found its manifests deriving it. Until then it is only a pull
    /// request's, never a version a revert would use; absent for content no pull request submitted.
    public var mergedAt: UTCTime?
    /// Whether the main branch's manifests derive this content: set by every apply of the main
    /// branch (any apply but `--only-uploads`) — true when they derive it and App Review had not
    /// rejected it when they began to, false when they no longer derive it or began to derive it
    /// already REJECTED. Absent in records no such apply has seen since it was introduced; those
    /// count as the main branch's when the main branch uploaded them or merged them.
    /// What tells a remote condition (App Review rejected content the main branch already used:
    /// attention) from a configuration error (manifests that take up REJECTED content: an error).
    public var inMain: Bool?

    public init(identifier: String, kind: Kind, name: String, locale: String? = nil, productScope: String? = nil,
                contentVersion: String, uploadBody: String? = nil, image: ImageFacts? = nil, firstUploadedAt: UTCTime,
                reviewStates: [ObservedReviewState] = [], submissions: [ContentSubmission]? = nil) {
        self.identifier = identifier
        self.kind = kind
        self.name = name
        self.locale = locale
        self.productScope = productScope
        self.contentVersion = contentVersion
        self.uploadBody = uploadBody
        self.image = image
        self.firstUploadedAt = firstUploadedAt
        self.reviewStates = reviewStates
        self.submissions = submissions
    }

    /// The last state observed, with the time it was first seen.
    public var currentReviewState: ObservedReviewState? { reviewStates.last }

    enum CodingKeys: String, CodingKey {
        case identifier, kind, name, locale, productScope = "product_scope", contentVersion = "content_version"
        case uploadBody = "upload_body", image, firstUploadedAt = "first_uploaded_at", reviewStates = "review_states"
        case submissions, mergedAt = "merged_at", inMain = "in_main"
    }

    /// Content only pull requests submitted (`apply --only-uploads`): the main branch neither
    /// uploaded, merged nor derives it.
    public var isPullRequestsOnly: Bool {
        submissions != nil && mergedAt == nil && inMain != true
    }

    /// Whether the main branch used this content before App Review rejected it (see `inMain`):
    /// its rejection is then a remote condition, not something these manifests got wrong.
    public var usedByMainBeforeRejection: Bool {
        inMain ?? (submissions == nil || mergedAt != nil)
    }

    /// When the content was last submitted by anyone: its newest submission, else its upload.
    public var lastSubmittedAt: UTCTime {
        max(firstUploadedAt, submissions?.map(\.at).max() ?? firstUploadedAt)
    }
}

/// One submitter of a piece of content and when it last submitted it.
public struct ContentSubmission: Codable, Sendable, Hashable {
    /// `pr-123`, from `--submitted-by` or GitHub's `GITHUB_REF` (`refs/pull/123/merge`).
    public var by: String
    public var at: UTCTime
    /// The run that submitted it (a GitHub Actions run URL), when known.
    public var run: String?

    public init(by: String, at: UTCTime, run: String? = nil) {
        self.by = by
        self.at = at
        self.run = run
    }
}

/// What identifies an uploaded image without its bytes.
public struct ImageFacts: Codable, Sendable, Hashable {
    /// `FULL_SIZE` or `BULLET_POINT`.
    public var size: String
    public var width: Int
    public var height: Int
    public var byteCount: Int
    /// Lowercase hex SHA-256 of the PNG file.
    public var sha256: String

    public init(size: String, width: Int, height: Int, byteCount: Int, sha256: String) {
        self.size = size
        self.width = width
        self.height = height
        self.byteCount = byteCount
        self.sha256 = sha256
    }

    enum CodingKeys: String, CodingKey { case size, width, height, byteCount = "byte_count", sha256 }
}

/// A review state (`PENDING`, `APPROVED`, `REJECTED`, or one Apple adds later) and when it was first seen.
public struct ObservedReviewState: Codable, Sendable, Hashable {
    public var state: String
    public var firstSeenAt: UTCTime

    public init(state: String, firstSeenAt: UTCTime) {
        self.state = state
        self.firstSeenAt = firstSeenAt
    }

    enum CodingKeys: String, CodingKey { case state, firstSeenAt = "first_seen_at" }
}

/// A message the tool did not upload that the manifests declare (`kind: ExternalMessage`) and an
/// apply found at Apple: adopted as it is, content unknown (Apple's lists return none).
public struct AdoptedRecord: Codable, Sendable, Hashable {
    public var identifier: String
    public var kind: ContentKind
    /// The `ExternalMessage`'s name in the manifests, as last seen.
    public var name: String
    /// When an apply first found it declared and at Apple.
    public var adoptedAt: UTCTime
    /// Review states in the order they were observed, as for uploaded content.
    public var reviewStates: [ObservedReviewState]
    /// When an apply deleted it (`--prune-id`); absent while it exists.
    public var deletedAt: UTCTime?

    public init(identifier: String, kind: ContentKind, name: String, adoptedAt: UTCTime, reviewStates: [ObservedReviewState] = []) {
        self.identifier = identifier
        self.kind = kind
        self.name = name
        self.adoptedAt = adoptedAt
        self.reviewStates = reviewStates
    }

    enum CodingKeys: String, CodingKey {
        case identifier, kind, name, adoptedAt = "adopted_at", reviewStates = "review_states", deletedAt = "deleted_at"
    }
}

/// The default message of one product and locale as last applied; nil identifier: cleared.
public struct DefaultRecord: Codable, Sendable, Hashable {
    public var productId: String
    public var locale: String
    public var messageIdentifier: String?
    public var appliedAt: UTCTime

    public init(productId: String, locale: String, messageIdentifier: String?, appliedAt: UTCTime) {
        self.productId = productId
        self.locale = locale
        self.messageIdentifier = messageIdentifier
        self.appliedAt = appliedAt
    }

    enum CodingKeys: String, CodingKey {
        case productId = "product_id", locale, messageIdentifier = "message_identifier", appliedAt = "applied_at"
    }
}

/// The realtime URL as last applied; nil url: removed.
public struct RealtimeURLRecord: Codable, Sendable, Hashable {
    public var url: String?
    public var appliedAt: UTCTime

    public init(url: String?, appliedAt: UTCTime) {
        self.url = url
        self.appliedAt = appliedAt
    }

    enum CodingKeys: String, CodingKey { case url, appliedAt = "applied_at" }
}

/// A realtime URL Apple refused to set until a sandbox performance test passes, and when.
public struct RealtimeURLRefusal: Codable, Sendable, Hashable {
    public var url: String
    public var refusedAt: UTCTime

    public init(url: String, refusedAt: UTCTime) {
        self.url = url
        self.refusedAt = refusedAt
    }

    enum CodingKeys: String, CodingKey { case url, refusedAt = "refused_at" }
}

/// The last performance-test result: Apple's answer as Apple spells it, and when it was seen.
public struct PerformanceTestRecord: Codable, Sendable, Hashable {
    public var requestId: String
    public var result: PerformanceTestResultResponse
    public var observedAt: UTCTime

    public init(requestId: String, result: PerformanceTestResultResponse, observedAt: UTCTime) {
        self.requestId = requestId
        self.result = result
        self.observedAt = observedAt
    }

    enum CodingKeys: String, CodingKey { case requestId = "request_id", result, observedAt = "observed_at" }
}

// Pure changes a writer makes; each keeps the document's lists sorted.
extension StateDocument {
    /// Adds the record of an upload, or keeps the first one when the identifier is already recorded
    /// (the identifier covers the content, so a re-upload is the same content).
    public mutating func recordUpload(_ record: ContentRecord) {
        guard !content.contains(where: { $0.identifier == record.identifier }) else { return }
        content.append(record)
        content.sort { $0.identifier < $1.identifier }
    }

    public func record(for identifier: String) -> ContentRecord? {
        content.first { $0.identifier == identifier.lowercased() || $0.identifier == identifier }
    }

    /// Notes a review state seen at `time`; returns whether the record changed.
    @discardableResult
    public mutating func observeReviewState(_ state: String, of identifier: String, at time: UTCTime) -> Bool {
        guard let index = content.firstIndex(where: { $0.identifier == identifier }) else { return false }
        guard content[index].reviewStates.last?.state != state else { return false }
        content[index].reviewStates.append(ObservedReviewState(state: state, firstSeenAt: time))
        return true
    }

    /// Notes that `by` submitted the content at `time` (keeping one entry per submitter, the latest).
    public mutating func recordSubmission(of identifier: String, by: String, at time: UTCTime, run: String?) {
        guard let index = content.firstIndex(where: { $0.identifier == identifier }) else { return }
        var submissions = content[index].submissions ?? []
        submissions.removeAll { $0.by == by }
        submissions.append(ContentSubmission(by: by, at: time, run: run))
        content[index].submissions = submissions.sorted { $0.by < $1.by }
    }

    /// Notes that the main branch derives content a pull request submitted (once: the merge).
    public mutating func recordMerge(of identifier: String, at time: UTCTime) {
        guard let index = content.firstIndex(where: { $0.identifier == identifier }),
              content[index].submissions != nil, content[index].mergedAt == nil else { return }
        content[index].mergedAt = time
    }

    /// An apply of the main branch notes which content its manifests derive (`derived`), given the
    /// content App Review has REJECTED (`rejected`): see `ContentRecord.inMain`.
    public mutating func recordMainDerivation(derived: Set<String>, rejected: Set<String>) {
        for index in content.indices {
            let identifier = content[index].identifier
            if !derived.contains(identifier) {
                content[index].inMain = false
            } else if !rejected.contains(identifier) {
                content[index].inMain = true
            } else if content[index].inMain == nil {
                // Taken up by these manifests while it was already REJECTED, unless the main
                // branch uploaded or merged it earlier (then it was in use before the rejection).
                content[index].inMain = content[index].usedByMainBeforeRejection
            }
        }
    }

    /// Notes that external content is adopted (or, already adopted, its current name and review
    /// state); returns whether the record changed.
    @discardableResult
    public mutating func recordAdoption(of identifier: String, kind: ContentKind, name: String, state: String, at time: UTCTime) -> Bool {
        var records = adopted ?? []
        let before = records
        if let index = records.firstIndex(where: { $0.identifier == identifier }) {
            // Deleted content stays deleted: Apple never hands a deleted identifier out again.
            guard records[index].deletedAt == nil else { return false }
            records[index].name = name
            if records[index].reviewStates.last?.state != state {
                records[index].reviewStates.append(ObservedReviewState(state: state, firstSeenAt: time))
            }
        } else {
            records.append(AdoptedRecord(identifier: identifier, kind: kind, name: name, adoptedAt: time,
                                         reviewStates: [ObservedReviewState(state: state, firstSeenAt: time)]))
            records.sort { $0.identifier < $1.identifier }
        }
        adopted = records
        return records != before
    }

    /// Notes that external content was deleted (`--prune-id`), adopting it first when this is the
    /// first apply that saw it.
    public mutating func recordAdoptedDeletion(of identifier: String, kind: ContentKind, name: String, at time: UTCTime) {
        var records = adopted ?? []
        if let index = records.firstIndex(where: { $0.identifier == identifier }) {
            if records[index].deletedAt == nil { records[index].deletedAt = time }
        } else {
            var record = AdoptedRecord(identifier: identifier, kind: kind, name: name, adoptedAt: time)
            record.deletedAt = time
            records.append(record)
            records.sort { $0.identifier < $1.identifier }
        }
        adopted = records
    }

    public func adoption(of identifier: String) -> AdoptedRecord? {
        adopted?.first { $0.identifier == identifier.lowercased() }
    }

    public mutating func removeRecord(for identifier: String) {
        content.removeAll { $0.identifier == identifier }
    }

    public mutating func recordDefault(productId: String, locale: String, messageIdentifier: String?, at time: UTCTime) {
        defaults.removeAll { $0.productId == productId && $0.locale == locale }
        defaults.append(DefaultRecord(productId: productId, locale: locale, messageIdentifier: messageIdentifier, appliedAt: time))
        defaults.sort { ($0.productId, $0.locale) < ($1.productId, $1.locale) }
    }

    public func lastAppliedDefault(productId: String, locale: String) -> DefaultRecord? {
        defaults.first { $0.productId == productId && $0.locale == locale }
    }
}
