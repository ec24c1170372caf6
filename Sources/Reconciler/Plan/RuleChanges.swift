import Foundation
import Basics
import RetentionMessagingModels
import Runtime

/// What a new version of a rule changes, attribute by attribute — what it matches, its share of a
/// split group, whether it is the control, what it answers — so that a reviewer reads `split.percent:
/// "45%" → "60%"` instead of two version digests.
enum RuleChanges {
    static func between(_ before: SnapshotRule, _ after: SnapshotRule) -> [FieldChange] {
        var changes: [FieldChange] = []
        func note(_ field: String, _ old: String?, _ new: String?) {
            if old != new { changes.append(FieldChange(field: field, before: old, after: new)) }
        }
        func list(_ values: [String]?, every: String) -> String { values.map { $0.joined(separator: ", ") } ?? every }
        func time(_ milliseconds: Int64?) -> String? {
            milliseconds.map { UTCTime(milliseconds: $0).formatted(.seconds) }
        }
        note("match.products", list(before.match.products, every: "every product"), list(after.match.products, every: "every product"))
        note("match.locales", list(before.match.locales, every: "every locale"), list(after.match.locales, every: "every locale"))
        note("match.window.from", time(before.match.notBefore), time(after.match.notBefore))
        note("match.window.until", time(before.match.notAfter), time(after.match.notAfter))
        for (field, old, new) in customerAttributes(before.match.customer, after.match.customer) { note(field, old, new) }
        note("split.group", before.match.split?.salt, after.match.split?.salt)
        note("split.percent", before.match.split.map(share), after.match.split.map(share))
        note("split.control", before.match.split.map { ($0.control ?? false) ? "true" : "false" },
             after.match.split.map { ($0.control ?? false) ? "true" : "false" })
        // The segments the group's Flow declares: shown only when they change, "none" for no declaration.
        let (oldSegments, newSegments) = (before.match.split?.confirm, after.match.split?.confirm)
        if oldSegments != newSegments {
            note("split.segments", oldSegments?.joined(separator: ", ") ?? "none", newSegments?.joined(separator: ", ") ?? "none")
        }
        // A condition this wording does not know yet still shows: the whole match, before and after.
        func unworded(_ match: SnapshotMatch) -> SnapshotMatch {
            var rest = match
            (rest.products, rest.locales, rest.notBefore, rest.notAfter, rest.customer, rest.split) = (nil, nil, nil, nil, nil, nil)
            return rest
        }
        if unworded(before.match) != unworded(after.match) { note("match", matchText(before.match), matchText(after.match)) }
        note("response.kind", before.response.kind.rawValue, after.response.kind.rawValue)
        note("response.message", before.response.message, after.response.message)
        note("response.product_id", before.response.productId, after.response.productId)
        note("response.billing_plan_type", before.response.billingPlanType?.rawValue, after.response.billingPlanType?.rawValue)
        note("response.offer_identifier", before.response.offerIdentifier, after.response.offerIdentifier)
        for (field, old, new) in advancedCommerceAttributes(before.response.advancedCommerce, after.response.advancedCommerce) {
            note(field, old, new)
        }
        // A message's new text is a new identifier; its words are in the upload's text changes.
        let locales = Set((before.response.messageIdentifiers ?? [:]).keys).union((after.response.messageIdentifiers ?? [:]).keys)
        for locale in locales.sorted() {
            note("response.message (\(locale))", before.response.messageIdentifiers?[locale], after.response.messageIdentifiers?[locale])
        }
        return changes
    }

    /// `match.customer`'s attributes as the manifest names them, before and after; "any" where a
    /// rule sets no condition on that fact.
    static func customerAttributes(_ before: CustomerConditions?, _ after: CustomerConditions?) -> [(String, String, String)] {
        func words(_ conditions: CustomerConditions?) -> [(String, String)] {
            let c = conditions ?? CustomerConditions()
            func list(_ values: [String]?) -> String { values.map { $0.joined(separator: ", ") } ?? "any" }
            return [
                ("storefronts", list(c.storefronts)),
                ("tenure.atLeast", c.tenureAtLeast?.description ?? "any"),
                ("tenure.below", c.tenureBelow?.description ?? "any"),
                ("offers.redeemedWithin", c.offerRedeemedWithin?.description ?? "any"),
                ("offers.notRedeemedWithin", c.noOfferRedeemedWithin?.description ?? "any"),
                ("offers.types", list(c.offerKinds?.map(\.name))),
                ("billing", list(c.billing?.map(\.rawValue))),
                ("priceIncrease", list(c.priceIncrease?.map(\.rawValue))),
                ("ownership", list(c.ownership?.map(\.rawValue))),
                ("unknown", c.unknownMatches == true ? "match" : "skip"),
            ]
        }
        return zip(words(before), words(after)).compactMap { old, new in
            old.1 == new.1 ? nil : ("match.customer.\(old.0)", old.1, new.1)
        }
    }

    /// `response.advancedCommerce`'s attributes as the manifest names them, before and after; nil on
    /// the side whose response is not an Advanced Commerce one.
    static func advancedCommerceAttributes(_ before: AdvancedCommerceChange?, _ after: AdvancedCommerceChange?) -> [(String, String?, String?)] {
        func words(_ change: AdvancedCommerceChange?) -> [(String, String?)] {
            let offer = change?.offer
            return [
                ("sku", change?.sku), ("currentSku", change?.currentSku), ("displayName", change?.displayName),
                ("description", change?.description), ("price", change.map { String($0.price) }),
                ("reason", change?.reason), ("effective", change?.effective),
                ("retainBillingCycle", change.map { $0.retainBillingCycle ? "true" : "false" }),
                ("offer.period", offer?.period), ("offer.periodCount", offer.map { String($0.periodCount) }),
                ("offer.price", offer.map { String($0.price) }), ("offer.reason", offer?.reason),
            ]
        }
        return zip(words(before), words(after)).compactMap { old, new in
            old.1 == new.1 ? nil : ("response.advanced_commerce.\(old.0)", old.1, new.1)
        }
    }

    /// The match as canonical JSON, for a condition the field-by-field wording does not name.
    static func matchText(_ match: SnapshotMatch) -> String {
        (try? CanonicalJSON.encode(match)).map { String(decoding: $0, as: UTF8.self) } ?? "\(match)"
    }

    /// `45% (buckets 0..<4500)`.
    static func share(_ split: SnapshotSplit) -> String {
        "\(SplitGroupChange.percentText(split.upperBucket - split.lowerBucket))% (buckets \(split.lowerBucket)..<\(split.upperBucket))"
    }
}

/// A split group that is live and whose arms the publish changes: the layout before and after, how
/// many customers change arm (the share of the group's buckets whose arm differs), and which arms
/// change what they match. Results keep the configurations apart as periods of the experiment.
/// A change held back while content waits for review is shown too, as what happens when it is published.
public struct SplitGroupChange: Codable, Sendable, Hashable {
    public struct Arm: Codable, Sendable, Hashable {
        public var rule: String
        /// Buckets of 10,000.
        public var lowerBucket: Int
        public var upperBucket: Int
        public var control: Bool

        enum CodingKeys: String, CodingKey { case rule, lowerBucket = "lower_bucket", upperBucket = "upper_bucket", control }

        public var percent: Double { Double(upperBucket - lowerBucket) / 100 }
    }

    public var group: String
    public var before: [Arm]
    public var after: [Arm]
    /// Buckets (of 10,000) whose customers are answered by another arm, or by none, after the publish.
    public var reassignedBuckets: Int
    /// Arms (rule ids) whose match conditions besides the split change: products, locales, window,
    /// customer conditions.
    public var matchChanged: [String] = []
    /// After the publish the arms do not all match the same customers.
    public var armsMatchDifferently = false
    /// The group's recorded layout changes, so results start a new period.
    public var newPeriod = true
    /// The change waits with its group for content in review: it happens when that is published.
    public var whenPublished = false

    /// When the publish changes the segments the group's Flow declares (`segments:`): those before and
    /// after, sorted (empty for none). Nil when they stay as they are.
    public var segmentsBefore: [String]?
    public var segmentsAfter: [String]?

    enum CodingKeys: String, CodingKey {
        case group, before, after, reassignedBuckets = "reassigned_buckets", reassignedPercent = "reassigned_percent"
        case matchChanged = "match_changed", armsMatchDifferently = "arms_match_differently", newPeriod = "new_period"
        case whenPublished = "when_published"
        case segmentsBefore = "segments_before", segmentsAfter = "segments_after"
    }

    public init(group: String, before: [Arm], after: [Arm], reassignedBuckets: Int, segmentsBefore: [String]? = nil,
                segmentsAfter: [String]? = nil) {
        self.group = group
        self.before = before
        self.after = after
        self.reassignedBuckets = reassignedBuckets
        self.segmentsBefore = segmentsBefore
        self.segmentsAfter = segmentsAfter
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(group: try c.decode(String.self, forKey: .group), before: try c.decode([Arm].self, forKey: .before),
                  after: try c.decode([Arm].self, forKey: .after), reassignedBuckets: try c.decode(Int.self, forKey: .reassignedBuckets),
                  segmentsBefore: try c.decodeIfPresent([String].self, forKey: .segmentsBefore),
                  segmentsAfter: try c.decodeIfPresent([String].self, forKey: .segmentsAfter))
        matchChanged = try c.decodeIfPresent([String].self, forKey: .matchChanged) ?? []
        armsMatchDifferently = try c.decodeIfPresent(Bool.self, forKey: .armsMatchDifferently) ?? false
        newPeriod = try c.decodeIfPresent(Bool.self, forKey: .newPeriod) ?? true
        whenPublished = try c.decodeIfPresent(Bool.self, forKey: .whenPublished) ?? false
    }

    /// Plan JSON also carries the share as a percentage, for readers that do not divide.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(group, forKey: .group)
        try c.encode(before, forKey: .before)
        try c.encode(after, forKey: .after)
        try c.encode(reassignedBuckets, forKey: .reassignedBuckets)
        try c.encode(reassignedPercent, forKey: .reassignedPercent)
        if !matchChanged.isEmpty { try c.encode(matchChanged, forKey: .matchChanged) }
        if armsMatchDifferently { try c.encode(true, forKey: .armsMatchDifferently) }
        try c.encode(newPeriod, forKey: .newPeriod)
        if whenPublished { try c.encode(true, forKey: .whenPublished) }
        try c.encodeIfPresent(segmentsBefore, forKey: .segmentsBefore)
        try c.encodeIfPresent(segmentsAfter, forKey: .segmentsAfter)
    }

    /// Whether the publish changes the group's declared segments (and so starts a period without moving a customer).
    public var changesSegments: Bool { segmentsBefore != nil || segmentsAfter != nil }

    public var reassignedPercent: Double { Double(reassignedBuckets) / 100 }

    /// `45/45/10`.
    public static func layout(_ arms: [Arm]) -> String {
        arms.map { percentText($0.upperBucket - $0.lowerBucket) }.joined(separator: "/")
    }

    /// Buckets as a percentage, without a needless fraction: 4500 → "45", 3333 → "33.33".
    public static func percentText(_ buckets: Int) -> String {
        buckets % 100 == 0 ? String(buckets / 100) : String(format: "%.2f", Double(buckets) / 100)
    }

    static let buckets = 10_000

    /// Every group live in `published` whose arms, or what an arm matches, differ in `next`, by group
    /// name. A group that `next` no longer has ends; that is not a re-assignment, and the rule's
    /// removal says so.
    static func between(published: RuntimeSnapshot?, next: RuntimeSnapshot) -> [SplitGroupChange] {
        func groups(_ snapshot: RuntimeSnapshot?) -> [String: [Arm]] {
            var arms: [String: [Arm]] = [:]
            for rule in snapshot?.rules ?? [] {
                guard let split = rule.match.split else { continue }
                arms[split.salt, default: []].append(Arm(rule: rule.id, lowerBucket: split.lowerBucket, upperBucket: split.upperBucket,
                                                         control: split.control ?? false))
            }
            return arms
        }
        /// Each arm's match without its split, by rule id.
        func conditions(_ snapshot: RuntimeSnapshot?) -> [String: SnapshotMatch] {
            Dictionary((snapshot?.rules ?? []).compactMap { rule in
                rule.match.split == nil ? nil : (rule.id, rule.match.withoutSplit)
            }, uniquingKeysWith: { first, _ in first })
        }
        let before = groups(published), after = groups(next)
        let (matchesBefore, matchesAfter) = (conditions(published), conditions(next))
        let (layoutsBefore, layoutsAfter) = (published?.splitLayouts ?? [:], next.splitLayouts)
        let (declaredBefore, declaredAfter) = (published?.declaredSegments ?? [:], next.declaredSegments)
        return before.keys.sorted().compactMap { group in
            guard let old = before[group], let new = after[group] else { return nil }
            let (wasDeclared, willDeclare) = (declaredBefore[group] ?? [], declaredAfter[group] ?? [])
            let matchChanged = new.map(\.rule).filter { rule in matchesBefore[rule].map { $0 != matchesAfter[rule] } ?? false }
            guard old != new || !matchChanged.isEmpty || wasDeclared != willDeclare else { return nil }
            var change = SplitGroupChange(group: group, before: old, after: new, reassignedBuckets: reassigned(from: old, to: new),
                                          segmentsBefore: wasDeclared != willDeclare ? wasDeclared : nil,
                                          segmentsAfter: wasDeclared != willDeclare ? willDeclare : nil)
            change.matchChanged = matchChanged
            change.armsMatchDifferently = Set(new.compactMap { matchesAfter[$0.rule] }).count > 1
            change.newPeriod = layoutsBefore[group] != layoutsAfter[group]
            return change
        }
    }

    /// The buckets whose arm differs between two layouts of a group.
    static func reassigned(from old: [Arm], to new: [Arm]) -> Int {
        func owner(_ arms: [Arm]) -> [String?] {
            var owners = [String?](repeating: nil, count: buckets)
            for arm in arms {
                for bucket in max(0, arm.lowerBucket)..<min(buckets, max(arm.lowerBucket, arm.upperBucket)) where owners[bucket] == nil {
                    owners[bucket] = arm.rule
                }
            }
            return owners
        }
        let (was, will) = (owner(old), owner(new))
        return (0..<buckets).filter { was[$0] != nil && was[$0] != will[$0] }.count
    }
}
