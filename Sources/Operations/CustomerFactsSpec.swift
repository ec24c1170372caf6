import Foundation
public import RetentionMessagingModels

/// The customer facts a preview assumes (`decide --customer`), written as
/// `storefront=DEU,tenure-days=40,offer.promotional=20d,billing=retry` or as a JSON object with the
/// same keys. Times are relative to the request's `signedDate`, so a preview reads the same any day.
/// A fact left out is unknown, exactly as it is in `serve` for a customer Apple has signed nothing about.
public enum CustomerFactsSpec {
    public static let keys = ["storefront", "tenure-days", "offer.<type>", "billing", "price-increase", "ownership"]

    public struct Refusal: Error, CustomStringConvertible {
        public var description: String
    }

    /// Parses `text`: a JSON object when it starts with `{`, else comma-separated `key=value` pairs.
    public static func parse(_ text: String, signedDate: Int64) throws(Refusal) -> CustomerFacts {
        var pairs: [(String, String)] = []
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        if trimmed.hasPrefix("{") {
            guard let object = (try? JSONSerialization.jsonObject(with: Data(trimmed.utf8))) as? [String: Any] else {
                throw Refusal(description: "the customer facts are not a JSON object")
            }
            for (key, value) in object.sorted(by: { $0.key < $1.key }) {
                switch value {
                case let text as String: pairs.append((key, text))
                case let number as NSNumber: pairs.append((key, number.stringValue))
                default: throw Refusal(description: "customer fact '\(key)' must be a string or a number")
                }
            }
        } else {
            for item in trimmed.split(separator: ",", omittingEmptySubsequences: true) {
                let parts = item.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
                guard parts.count == 2, !parts[0].isEmpty else {
                    throw Refusal(description: "'\(item)' is not key=value; write e.g. storefront=DEU,tenure-days=40")
                }
                pairs.append((parts[0], parts[1]))
            }
        }
        var facts = CustomerFacts(transactionAsOf: signedDate, renewalAsOf: signedDate)
        var sawTransaction = false, sawRenewal = false
        let day: Int64 = 86_400_000
        for (key, value) in pairs {
            switch key {
            case "storefront":
                guard Storefronts.isKnown(value) else {
                    throw Refusal(description: "storefront '\(value)' is not an ISO 3166-1 alpha-3 code (like USA, DEU, JPN)")
                }
                facts.storefront = value
                sawTransaction = true
            case "tenure-days":
                guard let days = Int64(value), days >= 0, days < 7000 else {
                    throw Refusal(description: "tenure-days '\(value)' must be a whole number of days, 0 to 6999")
                }
                facts.firstPurchase = signedDate - days * day
                sawTransaction = true
            case "billing":
                guard let state = BillingState(rawValue: value) else { throw unknown(value, key, BillingState.allCases.map(\.rawValue)) }
                facts.inBillingRetry = state != .none
                facts.gracePeriodExpires = state == .grace ? signedDate + day : nil
                sawRenewal = true
            case "price-increase":
                guard let state = PriceIncreaseState(rawValue: value) else { throw unknown(value, key, PriceIncreaseState.allCases.map(\.rawValue)) }
                facts.priceIncrease = state
                sawRenewal = true
            case "ownership":
                guard let owned = Ownership(rawValue: value) else { throw unknown(value, key, Ownership.allCases.map(\.rawValue)) }
                facts.ownership = owned
                sawTransaction = true
            default:
                guard key.hasPrefix("offer.") else {
                    throw Refusal(description: "unknown customer fact '\(key)'; the facts are \(keys.joined(separator: ", "))")
                }
                let name = String(key.dropFirst("offer.".count))
                guard let kind = OfferKind(name: name) else { throw unknown(name, "offer type", OfferKind.allCases.map(\.name)) }
                guard value.hasSuffix("d"), let days = Int64(value.dropLast()), days >= 0 else {
                    throw Refusal(description: "\(key)=\(value): write how many days ago the offer was redeemed, like \(key)=20d")
                }
                facts.offersRedeemed[kind] = signedDate - days * day
                sawTransaction = true
            }
        }
        // Offer history is known once any transaction fact is; billing and price increase once any renewal fact is.
        if !sawTransaction { facts.transactionAsOf = .min }
        if !sawRenewal { facts.renewalAsOf = .min }
        return facts
    }

    private static func unknown(_ value: String, _ what: String, _ allowed: [String]) -> Refusal {
        Refusal(description: "unknown \(what) '\(value)'; write one of \(allowed.joined(separator: ", "))")
    }
}
