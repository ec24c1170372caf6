/// The members of decision and outcome lines, as the contract names them. Writers, the reader, the
/// benchmark's line generator and the documented SQL all take their names from here.
public enum EventField: String, Sendable, CaseIterable, Hashable {
    // Both streams.
    case customer, environment, eventId, keyId, offerIdentifier, productId, schema, time, type
    // Both streams: the customer's storefront (on a decision, as the answer knew it; on an outcome,
    // as the notification's transaction signed it).
    case storefront
    // Decision lines.
    case alternateProductId, answer, arm, flow, latencyMicros, localeRequested, localeServed, messageIdentifier
    case requestIdentifier, rule, snapshot, splitControl, splitGroup, splitLayout
    case billing, facts, factsAsOf, offerWithin90Days, tenureBand
    // Outcome lines.
    case autoRenewProductId, autoRenewStatus, currency, effectiveDate, expiresDate, notificationType, notificationUUID
    case offerType, price, source, subtype
    case billingRetry, gracePeriodExpiresDate, originalPurchaseDate, ownership, priceIncreaseStatus, purchaseDate, redeemedOfferType

    /// Every member of a decision line, bytewise by name (the order canonical JSON writes keys in).
    public static let decisionLine: [EventField] = sortedByName([
        .alternateProductId, .answer, .arm, .billing, .customer, .environment, .eventId, .facts, .factsAsOf, .flow, .keyId,
        .latencyMicros, .localeRequested, .localeServed, .messageIdentifier, .offerIdentifier, .offerWithin90Days, .productId,
        .requestIdentifier, .rule, .schema, .snapshot, .splitControl, .splitGroup, .splitLayout, .storefront, .tenureBand,
        .time, .type,
    ])

    /// Every member of an outcome line, bytewise by name.
    public static let outcomeLine: [EventField] = sortedByName([
        .autoRenewProductId, .autoRenewStatus, .billingRetry, .currency, .customer, .effectiveDate, .environment, .eventId,
        .expiresDate, .gracePeriodExpiresDate, .keyId, .notificationType, .notificationUUID, .offerIdentifier, .offerType,
        .originalPurchaseDate, .ownership, .price, .priceIncreaseStatus, .productId, .purchaseDate, .redeemedOfferType,
        .schema, .source, .storefront, .subtype, .time, .type,
    ])

    private static func sortedByName(_ fields: [EventField]) -> [EventField] {
        fields.sorted { $0.rawValue.utf8.lexicographicallyPrecedes($1.rawValue.utf8) }
    }
}
