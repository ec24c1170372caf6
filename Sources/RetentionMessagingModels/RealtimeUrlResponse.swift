/// The answer of `GET /realtime/url` (Get Realtime URL), spelt as Apple spells it.
public struct RealtimeUrlResponse: Codable, Sendable, Hashable {
    public var realtimeURL: String
    public init(realtimeURL: String) { self.realtimeURL = realtimeURL }
}
