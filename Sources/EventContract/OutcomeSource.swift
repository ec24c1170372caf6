/// How an outcome event reached the store (`source` in the contract): `push`, a notification App Store
/// Server Notifications delivered to `serve`; `pull`, one `outcomes pull` read from Notification
/// History. The same notification may arrive both ways; readers de-duplicate by `eventId`.
public enum OutcomeSource: String, Sendable, CaseIterable, Hashable {
    case push
    case pull
}
