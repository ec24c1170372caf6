public import HTTPServer
public import TLS

/// How `serve` runs its HTTP server for Apple's realtime requests: tight limits, since every answer
/// must reach Apple within about 700 ms and a slow client must never hold a connection for long.
public enum RealtimeHTTPProfile {
    /// The cap on open connections, before the open-file limit lowers it (`SocketPlatform.connectionLimit`).
    public static let maxConnections = 4096
    /// The request head must arrive within this.
    public static let headTimeout: Double = 5
    /// An idle keep-alive connection is closed after this.
    public static let idleTimeout: Double = 60
    /// A request must arrive whole, and its answer be written, within these (slow clients are cut off).
    public static let requestTimeout: Double = 10
    public static let writeTimeout: Double = 10
    public static let maxHeaderSize = 16 * 1024
    /// How long SIGTERM waits for the requests in flight (the Kubernetes example gives the pod 35 s).
    public static let drainTimeout: Double = 25

    /// The server's settings, with what the operator chose on the command line.
    public static func configuration(maxConnections: Int, idleTimeout: Double, headTimeout: Double, eventLoops: Int,
                                     tls: TLSContext?) -> HTTPServerConfiguration {
        HTTPServerConfiguration(
            maxBodySize: RealtimeService.maxBodySize, maxHeaderSize: maxHeaderSize, maxConnections: maxConnections,
            idleTimeout: idleTimeout, requestTimeout: requestTimeout, writeTimeout: writeTimeout, allowNonLoopback: true, tls: tls,
            eventLoops: eventLoops, headTimeout: headTimeout)
    }
}
