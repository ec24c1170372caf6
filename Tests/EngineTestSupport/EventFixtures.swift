import EventContract
import EventStore
import Experiments
import Foundation

/// A decision event of customer `index`, for the event store's tests.
func decision(_ index: Int, at time: Int64, environment: String = "sandbox") -> EventRecord {
    DecisionFacts(time: time, environment: environment, requestIdentifier: "req-\(index)", customer: String(repeating: "a", count: 63) + "\(index % 10)",
                  keyId: "0badc0de", productId: "com.example.monthly", localeRequested: "en-US", localeServed: "en-US",
                  flow: "cancel-flow", rule: index % 2 == 0 ? "arm-a" : "arm-b", splitGroup: "test", splitControl: index % 2 == 0,
                  answer: .message, messageIdentifier: "m-\(index % 2)", offerIdentifier: nil, alternateProductId: nil,
                  snapshot: "sha256:00", latencyMicros: 900).record()
}

/// Every line of every segment under `root`, per stream.
func storedLines(_ root: URL, environment: String = "sandbox") throws -> [EventStream: [String]] {
    let source = FolderEventSource(root: root)
    var lines: [EventStream: [String]] = [:]
    for stream in EventStream.allCases {
        for partition in try source.partitions(of: stream, environment: environment) {
            for segment in try source.segments(of: stream, environment: environment, in: partition) {
                var data = Data()
                try source.read(segment) { data.append(contentsOf: $0) }
                lines[stream, default: []] += String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init)
            }
        }
    }
    return lines
}

/// Polls `condition` every 10 ms for at most 10 s.
func waitUntil(_ condition: () -> Bool) throws {
    let deadline = Date().addingTimeInterval(10)
    while !condition() {
        guard Date() < deadline else { throw WaitTimedOut() }
        Thread.sleep(forTimeInterval: 0.01)
    }
}

struct WaitTimedOut: Error {}
