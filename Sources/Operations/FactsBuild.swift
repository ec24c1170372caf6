import Basics
import EventContract
public import EventStore
public import Experiments
import Foundation
public import RetentionMessagingModels
public import StateStore

/// `facts publish` as a use case: folds every outcome event of an environment — each one a verified
/// notification's signed transaction and renewal info, keyed by the customer's pseudonym — into
/// one facts record per customer, and publishes the table beside the events for every `serve` replica.
///
/// The fold is the one `serve` applies to the notifications it receives (`CustomerFacts.fold`): per
/// customer, the newest signed transaction's storefront, currency, price and ownership, the newest
/// renewal info's billing and price-increase state, the earliest first purchase, and the latest
/// redemption of each offer type. The same SQL is documented in docs/targeting.md.
public enum FactsBuild {
    public struct Summary: Sendable {
        public var events: Int
        public var customers: Int
        /// Outcome lines written under another pseudonym key (a rotated secret): not in this table.
        public var otherKey: Int
        /// Customers whose newest fact is older than the retention window, left out.
        public var expired: Int
        public var newestFact: Int64?
    }

    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// Reads the outcome events of `environment` from `source`, for customers keyed with `keyId`.
    /// Customers whose newest fact is before `retainSince` (UNIX ms) are dropped.
    public static func fold(source: any EventSource, environment: String, keyId: String,
                            retainSince: Int64?) throws(Failure) -> (facts: [String: CustomerFacts], summary: Summary) {
        var facts: [String: CustomerFacts] = [:]
        var summary = Summary(events: 0, customers: 0, otherKey: 0, expired: 0, newestFact: nil)
        do {
            for partition in try source.partitions(of: .outcomes, environment: environment) {
                for segment in try source.segments(of: .outcomes, environment: environment, in: partition) {
                    var bytes = Data()
                    try source.read(segment) { bytes.append(contentsOf: $0) }
                    var lineNumber = 0
                    for line in bytes.split(separator: 0x0A, omittingEmptySubsequences: false) {
                        lineNumber += 1
                        guard !line.isEmpty else { continue }
                        guard let object = (try? JSONSerialization.jsonObject(with: Data(line))) as? [String: Any] else {
                            throw Failure(description: "\(segment.location):\(lineNumber): not a JSON object; the event store is damaged")
                        }
                        guard object[EventField.keyId.rawValue] as? String == keyId else {
                            summary.otherKey += 1
                            continue
                        }
                        guard let customer = object[EventField.customer.rawValue] as? String,
                              let observation = observation(object) else {
                            throw Failure(description: "\(segment.location):\(lineNumber): an outcome line without a customer or a time")
                        }
                        summary.events += 1
                        facts[customer, default: CustomerFacts()].fold(observation)
                    }
                }
            }
        } catch let failure as Failure {
            throw failure
        } catch {
            throw Failure(description: "cannot read the outcome events: \(error)")
        }
        if let retainSince {
            let before = facts.count
            facts = facts.filter { $0.value.asOf >= retainSince }
            summary.expired = before - facts.count
        }
        summary.customers = facts.count
        summary.newestFact = facts.values.map(\.asOf).max()
        return (facts, summary)
    }

    /// What one outcome line says about its customer, read by the contract's names; nil without a time.
    static func observation(_ line: [String: Any]) -> FactsObservation? {
        func time(_ field: EventField) -> Int64? { (line[field.rawValue] as? String).flatMap(EventTime.parse) }
        func integer(_ field: EventField) -> Int64? { (line[field.rawValue] as? NSNumber)?.int64Value }
        func text(_ field: EventField) -> String? { line[field.rawValue] as? String }
        guard let signedDate = time(.time) else { return nil }
        // Apple's transaction always carries its purchaseDate, and its renewal info its autoRenewStatus.
        let purchaseDate = time(.purchaseDate)
        let offer = integer(.redeemedOfferType).flatMap { OfferKind(rawValue: Int($0)) }
        var observation = FactsObservation(
            signedDate: signedDate, hasTransaction: purchaseDate != nil, storefront: text(.storefront), currency: text(.currency),
            price: integer(.price), originalPurchaseDate: time(.originalPurchaseDate), ownership: text(.ownership).flatMap(Ownership.init(apple:)),
            offerRedeemed: offer, offerDate: offer == nil ? nil : purchaseDate,
            hasRenewal: line[EventField.autoRenewStatus.rawValue] is NSNumber,
            inBillingRetry: (line[EventField.billingRetry.rawValue] as? NSNumber)?.boolValue,
            gracePeriodExpires: time(.gracePeriodExpiresDate), priceIncreaseStatus: integer(.priceIncreaseStatus).map(Int.init),
            autoRenewProductId: text(.autoRenewProductId))
        observation.notification = text(.eventId) ?? ""
        return observation
    }

    /// What `facts publish` does: folds the outcome events of `environment` in `source` (customers keyed
    /// with `keyId`, newer than `retainSince`) and publishes the table to `store`. Returns what was
    /// folded, the pointer written, and why older tables were kept, if they were.
    public static func publish(from source: any EventSource, bundleId: String, environment: String, keyId: String, retainSince: Int64?,
                               builtAt: Int64, to store: any ObjectStore) async throws
        -> (summary: Summary, pointer: FactsPointer, kept: String?) {
        let folded = try fold(source: source, environment: environment, keyId: keyId, retainSince: retainSince)
        let header = FactsTable.Header(bundleId: bundleId, environment: environment, keyId: keyId, count: folded.facts.count,
                                       newestFact: folded.summary.newestFact ?? 0)
        let published = try await publish(folded.facts, header: header, builtAt: builtAt, to: store)
        return (folded.summary, published.pointer, published.kept)
    }

    /// Writes the table, then the pointer that names it; then removes the tables older than the one
    /// the pointer named before (a replica still loading that one finds it). Returns the pointer, and
    /// why older tables were kept when the store would not remove them (an identity without
    /// `s3:DeleteObject`: the tool asks for no more than it needs, so removing is best effort).
    public static func publish(_ facts: [String: CustomerFacts], header: FactsTable.Header, builtAt: Int64,
                               to store: any ObjectStore) async throws -> (pointer: FactsPointer, kept: String?) {
        let bytes = try FactsTable.encode(facts, header: header)
        let digest = FactsPointer.digest(bytes)
        let folder = FactsPointer.folder(environment: header.environment)
        let pointerKey = FactsPointer.key(environment: header.environment)
        let previous = try await store.get(pointerKey).flatMap { try? JSONDecoder().decode(FactsPointer.self, from: $0) }
        let tableKey = "\(folder)/table-\(digest.dropFirst("sha256:".count).prefix(32)).rsfacts"
        try await store.put(tableKey, bytes)
        let pointer = FactsPointer(table: tableKey, digest: digest, count: facts.count, builtAt: builtAt, keyId: header.keyId)
        try await store.put(pointerKey, Array(try CanonicalJSON.encode(pointer)))
        var stale: [String] = []
        for key in try await store.list(prefix: folder + "/table-") {
            let full = key.hasPrefix(folder) ? key : folder + "/" + key
            if full != tableKey, full != previous?.table { stale.append(full) }
        }
        for key in stale {
            do {
                try await store.delete(key)
            } catch {
                return (pointer, "\(stale.count) older table(s) under \(store.location)/\(folder) were kept: \(error.description) "
                        + "(grant s3:DeleteObject on facts/*, or expire them with a lifecycle rule)")
            }
        }
        return (pointer, nil)
    }

    /// One customer as `facts show --format jsonl` prints it: sorted keys, times in whole seconds since
    /// 1970 (as the table keeps them), null for what is unknown — the columns of the documented SQL.
    public static func jsonLine(key: String, _ facts: CustomerFacts) -> String {
        func seconds(_ value: Int64?) -> String { value.map { String($0 / 1000) } ?? "null" }
        func text(_ value: String?) -> String {
            guard let value else { return "null" }
            let encoded = try? JSONSerialization.data(withJSONObject: [value], options: [.fragmentsAllowed])
            return encoded.map { String(decoding: $0.dropFirst().dropLast(), as: UTF8.self) } ?? "null"
        }
        var members: [String] = []
        members.append("\"autoRenewProductId\":\(text(facts.autoRenewProductId))")
        members.append("\"billingRetry\":\(facts.inBillingRetry.map { $0 ? "true" : "false" } ?? "null")")
        members.append("\"currency\":\(text(facts.currency))")
        members.append("\"firstPurchase\":\(seconds(facts.firstPurchase))")
        members.append("\"gracePeriodExpires\":\(seconds(facts.gracePeriodExpires))")
        members.append("\"key\":\(text(key))")
        for kind in OfferKind.allCases { members.append("\"offer\(kind.rawValue)\":\(seconds(facts.offersRedeemed[kind]))") }
        members.append("\"ownership\":\(text(facts.ownership?.rawValue))")
        members.append("\"price\":\(facts.price.map(String.init) ?? "null")")
        members.append("\"priceIncrease\":\(text(facts.priceIncrease?.rawValue))")
        members.append("\"renewalAsOf\":\(seconds(facts.renewalAsOf > .min ? facts.renewalAsOf : nil))")
        members.append("\"storefront\":\(text(facts.storefront))")
        members.append("\"transactionAsOf\":\(seconds(facts.transactionAsOf > .min ? facts.transactionAsOf : nil))")
        return "{" + members.joined(separator: ",") + "}"
    }
}
