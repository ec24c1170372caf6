public import Foundation

/// So that `localizedDescription` (what many callers print) says what happened.
extension RetentionMessagingError: LocalizedError {
    public var errorDescription: String? { description }
}
