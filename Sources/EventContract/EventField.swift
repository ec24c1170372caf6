/// The members of decision and outcome lines, as the contract names them. Writers, the reader, the
/// benchmark's line generator and the documented SQL all take their names from here.
public enum EventField: String, Sendable, CaseIterable, Hashable {
    // Both streams.
    case customer, environment, eventId, keyId, offerIdentifier, productId, schema, time, type
    // Decision lines.
    case alternateProductId, answer, arm, flow, latencyMicros, localeRequested, localeServed, messageIdentifier
    case requestIdentifier, rule, snapshot, splitControl, splitGroup, splitLayout
    // Outcome lines.
    case autoRenewProductId, autoRenewStatus, currency, effectiveDate, expiresDate, notificationType, notificationUUID
    case offerType, price, source, subtype

    /// Every member of a decision line, bytewise by name (the order canonical JSON writes keys in).
    public static let decisionLine: [EventField] = sortedByName([
        .alternateProductId, .answer, .arm, .customer, .environment, .eventId, .flow, .keyId, .latencyMicros,
        .localeRequested, .localeServed, .messageIdentifier, .offerIdentifier, .productId, .requestIdentifier,
        .rule, .schema, .snapshot, .splitControl, .splitGroup, .splitLayout, .time, .type,
    ])

    /// Every member of an outcome line, bytewise by name.
    public static let outcomeLine: [EventField] = sortedByName([
        .autoRenewProductId, .autoRenewStatus, .currency, .customer, .effectiveDate, .environment, .eventId,
        .expiresDate, .keyId, .notificationType, .notificationUUID, .offerIdentifier, .offerType, .price,
        .productId, .schema, .source, .subtype, .time, .type,
    ])

    private static func sortedByName(_ fields: [EventField]) -> [EventField] {
        fields.sorted { $0.rawValue.utf8.lexicographicallyPrecedes($1.rawValue.utf8) }
    }
}
