public import RetentionMessagingModels
import Crypto
import Foundation

// The runtime snapshot: what the reconciler publishes and the decision engine answers from.
// It holds only rules whose every message and image is APPROVED in its environment.
// Serialised with `CanonicalJSON`; `digest` covers every other field.

public struct RuntimeSnapshot: Codable, Sendable, Hashable {
    public static let currentSchemaVersion = 1

    public var schemaVersion: Int
    public var bundleId: String
    public var appAppleId: Int64?
    public var environment: Environment
    /// Language fallbacks from the flows, e.g. `de-AT` → `de-DE`.
    public var localeFallbacks: [String: String]
    /// In evaluation order: flows by name, rules as written.
    public var rules: [SnapshotRule]
    /// `sha256:<64 lowercase hex>` over the canonical JSON of this snapshot with `digest` set to "".
    public var digest: String

    public init(schemaVersion: Int = RuntimeSnapshot.currentSchemaVersion, bundleId: String, appAppleId: Int64?,
                environment: Environment, localeFallbacks: [String: String], rules: [SnapshotRule], digest: String = "") {
        self.schemaVersion = schemaVersion
        self.bundleId = bundleId
        self.appAppleId = appAppleId
        self.environment = environment
        self.localeFallbacks = localeFallbacks
        self.rules = rules
        self.digest = digest
    }
}

public struct SnapshotRule: Codable, Sendable, Hashable {
    /// `<flow>/<rule>`: stable across versions, so a blocked rule can be held at its previous version.
    public var id: String
    /// First 16 hex digits of SHA-256 over the canonical JSON of `match` and `response`.
    public var version: String
    public var match: SnapshotMatch
    public var response: SnapshotResponse

    public init(id: String, version: String, match: SnapshotMatch, response: SnapshotResponse) {
        self.id = id
        self.version = version
        self.match = match
        self.response = response
    }
}

/// Every condition must hold; nil always holds. Environment filtering happens at compile time.
public struct SnapshotMatch: Codable, Sendable, Hashable {
    public var products: [String]?
    public var locales: [String]?
    /// Inclusive, UNIX ms, compared with the request's `signedDate`.
    public var notBefore: Int64?
    /// Exclusive, UNIX ms.
    public var notAfter: Int64?
    /// Conditions on what Apple signed about the customer; absent for rules without them, so their
    /// snapshots keep their bytes and digests.
    public var customer: CustomerConditions?
    public var split: SnapshotSplit?

    public init(products: [String]? = nil, locales: [String]? = nil, notBefore: Int64? = nil,
                notAfter: Int64? = nil, customer: CustomerConditions? = nil, split: SnapshotSplit? = nil) {
        self.products = products
        self.locales = locales
        self.notBefore = notBefore
        self.notAfter = notAfter
        self.customer = customer
        self.split = split
    }
}

/// The customer's bucket is `bucket(salt, originalTransactionId)` in 0..<10000; the rule matches
/// when `lowerBucket <= bucket < upperBucket`.
public struct SnapshotSplit: Codable, Sendable, Hashable {
    public static let bucketCount = 10_000
    public var salt: String
    public var lowerBucket: Int
    public var upperBucket: Int
    /// True for the rule the manifest marks as its group's control; absent (nil) otherwise, so
    /// snapshots without controls keep their bytes and digests. The salt is the group's name.
    public var control: Bool?
    /// The breakdowns (`storefront`, `tenure`, …) the Flow declared, before the experiment, that the
    /// group is judged by (`segments:`), sorted; the same on every arm of the group. Absent (nil) when
    /// none is declared, so snapshots without declarations keep their bytes, digests and layouts.
    public var confirm: [String]?

    public init(salt: String, lowerBucket: Int, upperBucket: Int, control: Bool? = nil, confirm: [String]? = nil) {
        self.salt = salt
        self.lowerBucket = lowerBucket
        self.upperBucket = upperBucket
        self.control = control == true ? true : nil
        self.confirm = confirm?.isEmpty == false ? confirm : nil
    }
}

public struct SnapshotResponse: Codable, Sendable, Hashable {
    public enum Kind: String, Codable, Sendable, Hashable, CaseIterable {
        case message, alternateProduct, promotionalOffer, advancedCommerce, none
    }

    public var kind: Kind
    /// The message's manifest name (for explanations), nil for `none`.
    public var message: String?
    /// Locale → approved message identifier; nil for `none`.
    public var messageIdentifiers: [String: String]?
    /// `alternateProduct` only.
    public var productId: String?
    public var billingPlanType: BillingPlanType?
    /// `promotionalOffer` only.
    public var offerIdentifier: String?
    /// `advancedCommerce` only: the change serve signs into `advancedCommerceData` per request.
    public var advancedCommerce: AdvancedCommerceChange?

    public init(kind: Kind, message: String? = nil, messageIdentifiers: [String: String]? = nil,
                productId: String? = nil, billingPlanType: BillingPlanType? = nil, offerIdentifier: String? = nil,
                advancedCommerce: AdvancedCommerceChange? = nil) {
        self.advancedCommerce = advancedCommerce
        self.kind = kind
        self.message = message
        self.messageIdentifiers = messageIdentifiers
        self.productId = productId
        self.billingPlanType = billingPlanType
        self.offerIdentifier = offerIdentifier
    }
}

extension SnapshotMatch {
    /// What the rule matches besides its split: products, locales, window, customer conditions.
    public var withoutSplit: SnapshotMatch {
        var match = self
        match.split = nil
        return match
    }
}

extension RuntimeSnapshot {
    /// Each split group's layout, by group (salt): its arms in evaluation order as
    /// `rule:lower-upper`, the control marked `*` — `arm-a*:0-4500,arm-b:4500-9000,holdout:9000-10000`,
    /// then attributes `;key=value` sorted by key, only when the group has them. Recorded on every
    /// decision of an arm (`splitLayout`), so `results` reports each configuration of an experiment as
    /// a period of its own: re-weighting, adding or removing an arm, changing the control, changing
    /// what one arm matches, or declaring other segments starts a new one.
    ///
    /// - `;confirm=storefront+tenure`: the segments its Flow declared (see `SnapshotSplit.confirm`), so
    ///   the decisions of a period say what was declared when they were made.
    /// - `;match=<8 hex digits>` only when the arms do not all match the same customers (their
    ///   products, locales, window or customer conditions differ): the first 8 hex digits of SHA-256
    ///   over the canonical JSON of the arms' matches without their splits, in evaluation order.
    ///
    /// A group without attributes keeps the layout it always had, so its periods go on unchanged.
    public var splitLayouts: [String: String] {
        var arms: [String: [String]] = [:]
        var matches: [String: [SnapshotMatch]] = [:]
        let confirmed = declaredSegments
        for rule in rules {
            guard let split = rule.match.split else { continue }
            let name = rule.id.split(separator: "/", maxSplits: 1).last.map(String.init) ?? rule.id
            arms[split.salt, default: []].append("\(name)\(split.control == true ? "*" : ""):\(split.lowerBucket)-\(split.upperBucket)")
            matches[split.salt, default: []].append(rule.match.withoutSplit)
        }
        return Dictionary(uniqueKeysWithValues: arms.map { group, parts in
            var attributes: [(key: String, value: String)] = []
            if let conditions = matches[group], Set(conditions).count > 1 {
                attributes.append(("match", Self.matchHash(conditions)))
            }
            if let confirm = confirmed[group], !confirm.isEmpty { attributes.append(("confirm", confirm.joined(separator: "+"))) }
            return (group, SplitLayoutAttributes.append(attributes, to: parts.joined(separator: ",")))
        })
    }

    /// The first 8 hex digits of SHA-256 over the canonical JSON of the arms' conditions, in order.
    static func matchHash(_ conditions: [SnapshotMatch]) -> String {
        let bytes = (try? CanonicalJSON.encode(conditions)).map { Array($0) } ?? Array("\(conditions)".utf8)
        return String(Digest.sha256Hex(bytes).prefix(8))
    }

    /// The segments declared for each split group (`SnapshotSplit.confirm`), by group; groups without are absent.
    public var declaredSegments: [String: [String]] {
        var declared: [String: [String]] = [:]
        for rule in rules {
            if let split = rule.match.split, let confirm = split.confirm, declared[split.salt] == nil { declared[split.salt] = confirm }
        }
        return declared
    }
}

/// The `;key=value` attributes after a split layout's arms: written sorted by key; a reader splits
/// them off and ignores the keys it does not know.
public enum SplitLayoutAttributes {
    /// `layout;a=1;b=2`, the attributes sorted by key.
    public static func append(_ attributes: [(key: String, value: String)], to layout: String) -> String {
        attributes.sorted { $0.key < $1.key }.reduce(layout) { $0 + ";\($1.key)=\($1.value)" }
    }
}
