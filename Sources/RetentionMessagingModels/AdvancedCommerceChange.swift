/// The one change an `advancedCommerce` answer recommends: Apple asks for a SubscriptionModifyInAppRequest
/// with a single SubscriptionModifyChangeItem. Names and values are the Advanced Commerce API's; prices are
/// in milliunits of the currency. `retainBillingCycle` belongs to the request, the rest to the change item.
public struct AdvancedCommerceChange: Codable, Sendable, Hashable {
    /// The SKU the customer changes to (`SKU`) and the one they have now (`currentSKU`).
    public var sku: String
    public var currentSku: String
    public var displayName: String
    public var description: String
    public var price: Int64
    /// UPGRADE, DOWNGRADE or APPLY_OFFER.
    public var reason: String
    /// IMMEDIATELY or NEXT_BILL_CYCLE.
    public var effective: String
    public var retainBillingCycle: Bool
    public var offer: AdvancedCommerceOffer?

    public init(sku: String, currentSku: String, displayName: String, description: String, price: Int64,
                reason: String, effective: String, retainBillingCycle: Bool, offer: AdvancedCommerceOffer? = nil) {
        self.sku = sku
        self.currentSku = currentSku
        self.displayName = displayName
        self.description = description
        self.price = price
        self.reason = reason
        self.effective = effective
        self.retainBillingCycle = retainBillingCycle
        self.offer = offer
    }

    public static let reasons = ["UPGRADE", "DOWNGRADE", "APPLY_OFFER"]
    public static let effectiveValues = ["IMMEDIATELY", "NEXT_BILL_CYCLE"]
    /// The Advanced Commerce API's limits on a change item's texts (UTF-8 characters).
    public static let maximumDisplayName = 30
    public static let maximumDescription = 45
    public static let maximumSku = 128

    /// The SubscriptionModifyInAppRequest, as sorted-key JSON, that the JWS's `request` claim carries
    /// (Base64-encoded): operation MODIFY_SUBSCRIPTION, version 1, this change as the only change item.
    public func requestJSON(transactionId: String, requestReferenceId: String) -> [UInt8] {
        var writer = CanonicalJSONWriter(capacity: 512)
        writer.object { request in
            request.member("changeItems") { array in
                array.bytes.append(UInt8(ascii: "["))
                array.object { item in
                    item.member("SKU", string: sku)
                    item.member("currentSKU", string: currentSku)
                    item.member("description", string: description)
                    item.member("displayName", string: displayName)
                    item.member("effective", string: effective)
                    if let offer {
                        item.member("offer") { value in
                            value.object { fields in
                                fields.member("period", string: offer.period)
                                fields.member("periodCount", integer: Int64(offer.periodCount))
                                fields.member("price", integer: offer.price)
                                fields.member("reason", string: offer.reason)
                            }
                        }
                    }
                    item.member("price", integer: price)
                    item.member("reason", string: reason)
                }
                array.bytes.append(UInt8(ascii: "]"))
            }
            request.member("operation", string: "MODIFY_SUBSCRIPTION")
            request.member("requestInfo") { value in
                value.object { $0.member("requestReferenceId", string: requestReferenceId) }
            }
            request.member("retainBillingCycle", literal: retainBillingCycle ? "true" : "false")
            request.member("transactionId", string: transactionId)
            request.member("version", string: "1")
        }
        return writer.bytes
    }
}

/// A discount on the changed item (the Advanced Commerce API's `offer`): `periodCount` periods of
/// `period` at `price` milliunits, for `reason`.
public struct AdvancedCommerceOffer: Codable, Sendable, Hashable {
    /// P3D, P1W, P2W, P1M, P2M, P3M, P6M, P9M or P1Y.
    public var period: String
    /// 1 to 12.
    public var periodCount: Int
    public var price: Int64
    /// ACQUISITION, WIN_BACK or RETENTION.
    public var reason: String

    public init(period: String, periodCount: Int, price: Int64, reason: String) {
        self.period = period
        self.periodCount = periodCount
        self.price = price
        self.reason = reason
    }

    public static let periods = ["P3D", "P1W", "P2W", "P1M", "P2M", "P3M", "P6M", "P9M", "P1Y"]
    public static let reasons = ["ACQUISITION", "WIN_BACK", "RETENTION"]
    public static let periodCounts = 1...12
}
