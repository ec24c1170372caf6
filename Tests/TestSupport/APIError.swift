public import RetentionMessaging

/// Runs `body` and returns the `RetentionMessagingError` it threw, or nil; any other error comes
/// back as `.decoding`, so an expectation on the API error fails and shows it.
public func apiError(_ body: () async throws -> Void) async -> RetentionMessagingError? {
    do {
        try await body()
        return nil
    } catch let error as RetentionMessagingError {
        return error
    } catch {
        return .decoding("unexpected error type: \(error)")
    }
}
