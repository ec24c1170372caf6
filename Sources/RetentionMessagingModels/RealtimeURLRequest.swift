/// The body of `PUT /realtime/url` (Configure Realtime URL).
public struct RealtimeURLRequest: Codable, Sendable, Hashable {
    public var realtimeURL: String
    public init(realtimeURL: String) { self.realtimeURL = realtimeURL }
}
