public import RetentionMessagingModels

/// Signs the realtime requests a performance test sends: turns a decoded payload into the compact
/// JWS that goes into `{"signedPayload": …}`. The emulator's own test chain plays this role in real
/// runs; tests may sign with anything their server accepts.
public protocol RealtimeRequestSigner: Sendable {
    func sign(_ payload: DecodedRealtimeRequestBody) throws -> String
}

/// A signer made from a closure.
public struct ClosureRealtimeRequestSigner: RealtimeRequestSigner {
    private let body: @Sendable (DecodedRealtimeRequestBody) throws -> String
    public init(_ body: @escaping @Sendable (DecodedRealtimeRequestBody) throws -> String) { self.body = body }
    public func sign(_ payload: DecodedRealtimeRequestBody) throws -> String { try body(payload) }
}
