import CLIKit
import RetentionMessaging
import RetentionMessagingModels
import Synchronization

/// Says on standard error how far a long series of reads has come: one line at each tenth of the
/// expected calls (never one per call), so a run of hundreds of calls at Apple's pace shows it is
/// moving. Counted in calls, not in time, so the same run prints the same lines.
final class CallProgress: Sendable {
    /// Fewer calls than this finish too soon to need a progress line.
    static let minimumCalls = 50

    let expected: Int
    let label: String
    let console: Console
    private let done = Mutex(0)

    init(expected: Int, label: String, console: Console) {
        self.expected = expected
        self.label = label
        self.console = console
    }

    var count: Int { done.withLock { $0 } }

    /// Notes one finished call (answered or failed), printing a line when it completes a tenth.
    func called() {
        let count = done.withLock { done -> Int in
            done += 1
            return done
        }
        guard let line = Self.line(after: count, of: expected, label: label) else { return }
        console.error(line)
    }

    /// The line for the `count`-th finished call of `expected`, when it is the first at or past a
    /// tenth (10% to 90%; the command's own summary says when all are done).
    static func line(after count: Int, of expected: Int, label: String) -> String? {
        guard expected >= minimumCalls, count < expected else { return nil }
        let tenth = count * 10 / expected
        guard tenth > (count - 1) * 10 / expected, tenth >= 1 else { return nil }
        return "  … \(label): \(count) of \(expected) calls (\(tenth * 10)%)"
    }
}

/// An API that tells a `CallProgress` of every call it forwards.
struct ProgressReportingAPI: RetentionMessagingAPI {
    let base: any RetentionMessagingAPI
    let progress: CallProgress

    var environment: Environment { base.environment }
    var requestCounts: RequestCounts { base.requestCounts }

    func uploadMessage(identifier: String, body: UploadMessageRequestBody) async throws {
        defer { progress.called() }
        try await base.uploadMessage(identifier: identifier, body: body)
    }

    func deleteMessage(identifier: String) async throws {
        defer { progress.called() }
        try await base.deleteMessage(identifier: identifier)
    }

    func getMessageList() async throws -> GetMessageListResponse {
        defer { progress.called() }
        return try await base.getMessageList()
    }

    func uploadImage(identifier: String, size: ImageSize, png: [UInt8]) async throws {
        defer { progress.called() }
        try await base.uploadImage(identifier: identifier, size: size, png: png)
    }

    func deleteImage(identifier: String) async throws {
        defer { progress.called() }
        try await base.deleteImage(identifier: identifier)
    }

    func getImageList() async throws -> GetImageListResponse {
        defer { progress.called() }
        return try await base.getImageList()
    }

    func configureDefaultMessage(productId: String, locale: String, messageIdentifier: String) async throws {
        defer { progress.called() }
        try await base.configureDefaultMessage(productId: productId, locale: locale, messageIdentifier: messageIdentifier)
    }

    func getDefaultMessage(productId: String, locale: String) async throws -> DefaultConfigurationResponse? {
        defer { progress.called() }
        return try await base.getDefaultMessage(productId: productId, locale: locale)
    }

    func deleteDefaultMessage(productId: String, locale: String) async throws {
        defer { progress.called() }
        try await base.deleteDefaultMessage(productId: productId, locale: locale)
    }

    func configureRealtimeURL(_ url: String) async throws {
        defer { progress.called() }
        try await base.configureRealtimeURL(url)
    }

    func getRealtimeURL() async throws -> String? {
        defer { progress.called() }
        return try await base.getRealtimeURL()
    }

    func deleteRealtimeURL() async throws {
        defer { progress.called() }
        try await base.deleteRealtimeURL()
    }
}
