public import Basics
import Foundation
import Synchronization

/// Why no source gave credentials: every source tried, in order, with its reason. Never holds a
/// key, a token or a secret, since no source's reason does.
public struct AWSCredentialsError: Error, Sendable, Equatable, CustomStringConvertible {
    public var tried: [Tried]

    public struct Tried: Sendable, Equatable {
        public var source: String
        public var reason: String
    }

    public var description: String {
        let list = tried.enumerated().map { "\($0.offset + 1). \($0.element.source): \($0.element.reason)" }
        return tried.count == 1 ? "no AWS credentials from \(list[0].dropFirst(3))"
            : "no AWS credentials; tried, in order: " + list.joined(separator: "; ")
    }
}

/// The credentials S3 requests are signed with, from the first source of a chain that has them.
///
/// Temporary credentials are kept and refreshed `refreshMargin` seconds before they expire, from the
/// source that gave them. One refresh runs at a time; meanwhile every request signs with the
/// credentials still valid. A refresh that fails while they are valid is tried again `retryDelay`
/// seconds later, and requests go on with the old ones. Each request takes the credentials once
/// (a snapshot) and signs with them, so a refresh never changes a request in flight.
public final class AWSCredentialsProvider: Sendable, Hashable, CustomStringConvertible {
    /// The SDKs refresh five minutes before the expiration.
    public static let defaultRefreshMargin: Double = 300

    public let sources: [any AWSCredentialSource]
    private let clock: any RetentionClock
    private let refreshMargin: Double
    private let retryDelay: Double
    private let state = Mutex(State())

    private struct State {
        var current: AWSCredentials?
        /// The index of the source that gave `current`; later refreshes ask it alone.
        var source: Int?
        var refresh: Task<Result<AWSCredentials, AWSCredentialsError>, Never>?
        /// No new refresh before this time, after one failed while `current` was still valid.
        var retryAt: Double = 0
    }

    public init(sources: [any AWSCredentialSource], clock: any RetentionClock = SystemClock(),
                refreshMargin: Double = AWSCredentialsProvider.defaultRefreshMargin, retryDelay: Double = 30) {
        self.sources = sources
        self.clock = clock
        self.refreshMargin = refreshMargin
        self.retryDelay = retryDelay
    }

    /// Fixed long-term or session credentials.
    public convenience init(_ credentials: AWSCredentials) {
        self.init(sources: [StaticCredentialSource(credentials)])
    }

    public var description: String { "AWS credentials from \(sourceName ?? sources.map(\.name).joined(separator: ", then "))" }

    /// The name of the source the current credentials came from; nil before the first request.
    public var sourceName: String? {
        state.withLock { state in state.source.map { sources[$0].name } }
    }

    /// The credentials to sign one request with.
    public func credentials() async throws(AWSCredentialsError) -> AWSCredentials {
        let now = clock.now()
        enum Step { case use(AWSCredentials), wait(Task<Result<AWSCredentials, AWSCredentialsError>, Never>) }
        let step: Step = state.withLock { state in
            if let current = state.current, !needsRefresh(current, at: now) { return .use(current) }
            let valid = state.current.flatMap { isValid($0, at: now) ? $0 : nil }
            if let running = state.refresh { return valid.map(Step.use) ?? .wait(running) }
            if let valid, now < state.retryAt { return .use(valid) }
            let source = state.source
            let task = Task { await self.refresh(asking: source) }
            state.refresh = task
            return .wait(task)
        }
        switch step {
        case .use(let credentials):
            return credentials
        case .wait(let task):
            switch await task.value {
            case .success(let credentials): return credentials
            case .failure(let error):
                // The refresh failed: the old credentials serve while they are valid.
                let kept = state.withLock { state in state.current.flatMap { isValid($0, at: clock.now()) ? $0 : nil } }
                if let kept { return kept }
                throw error
            }
        }
    }

    /// `credentials()`, blocking the calling thread: for a thread of the caller's own (the event
    /// recorder's). Returns at once while the credentials need no refresh.
    @available(*, noasync, message: "blocks the calling thread; from async code, await credentials()")
    public func credentialsWaiting() -> Result<AWSCredentials, AWSCredentialsError> {
        let now = clock.now()
        if let current = state.withLock({ $0.current }), !needsRefresh(current, at: now) { return .success(current) }
        let answer = Mutex<Result<AWSCredentials, AWSCredentialsError>?>(nil)
        let ready = DispatchSemaphore(value: 0)
        Task {
            let result: Result<AWSCredentials, AWSCredentialsError>
            do throws(AWSCredentialsError) {
                result = .success(try await credentials())
            } catch {
                result = .failure(error)
            }
            answer.withLock { $0 = result }
            ready.signal()
        }
        ready.wait()
        return answer.withLock { $0 } ?? .failure(AWSCredentialsError(tried: []))
    }

    /// Asks the source that gave the current credentials, or, the first time, each source in order
    /// until one has credentials. Runs once at a time and records its outcome.
    private func refresh(asking known: Int?) async -> Result<AWSCredentials, AWSCredentialsError> {
        var tried: [AWSCredentialsError.Tried] = []
        var found: (AWSCredentials, Int)?
        for index in known.map({ [$0] }) ?? Array(sources.indices) {
            switch await sources[index].resolve() {
            case .credentials(let credentials):
                found = (credentials, index)
            case .notConfigured(let reason), .failed(let reason):
                tried.append(.init(source: sources[index].name, reason: reason))
            }
            if found != nil { break }
        }
        let now = clock.now()
        return state.withLock { state in
            state.refresh = nil
            guard let (credentials, index) = found else {
                state.retryAt = now + retryDelay
                return .failure(AWSCredentialsError(tried: tried))
            }
            state.current = credentials
            state.source = index
            state.retryAt = 0
            return .success(credentials)
        }
    }

    private func needsRefresh(_ credentials: AWSCredentials, at now: Double) -> Bool {
        guard let expiration = credentials.expiration else { return false }
        return Double(expiration.milliseconds) / 1000 - refreshMargin <= now
    }

    /// Still accepted for a request that starts now (a few seconds' slack for the request itself).
    private func isValid(_ credentials: AWSCredentials, at now: Double) -> Bool {
        guard let expiration = credentials.expiration else { return true }
        return Double(expiration.milliseconds) / 1000 - 5 > now
    }

    public static func == (lhs: AWSCredentialsProvider, rhs: AWSCredentialsProvider) -> Bool { lhs === rhs }

    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}
