public import Crypto
public import RetentionMessagingModels

/// Signs realtime requests as Apple does: ES256 by the chain's leaf, with `x5c` [leaf,
/// intermediate, root], over the canonical JSON of the payload.
public struct ChainRealtimeRequestSigner: RealtimeRequestSigner {
    public let chain: AppleStyleSigningChain

    public init(chain: AppleStyleSigningChain) { self.chain = chain }

    public func sign(_ payload: DecodedRealtimeRequestBody) throws -> String {
        try chain.sign(payloadJSON: Array(try CanonicalJSON.encode(payload)))
    }
}

extension EmulatorConfiguration {
    /// Makes performance tests and simulated customers' notifications sign with `chain`, and
    /// `GET /emulator/test-root.pem` hand out its root.
    public mutating func useTestChain(_ chain: AppleStyleSigningChain) {
        realtimeSigner = ChainRealtimeRequestSigner(chain: chain)
        notificationSigner = NotificationSigner(chain: chain)
        realtimeRootCertificatePEM = chain.root.pem
    }
}
