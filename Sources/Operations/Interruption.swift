public import CLIKit
import Dispatch
import Foundation
public import Reconciler
import Synchronization

/// Turns SIGINT and SIGTERM into a request to stop, so that apply can finish the action in flight,
/// write its report and exit 130 or 143 instead of dying half-way with nothing recorded.
public final class Interruption: Sendable {
    private struct State {
        var received: ApplyStop?
        var onSignal: (@Sendable () -> Void)?
        /// Kept alive until `uninstall`.
        var watcher: SignalWatcher?
    }

    private let state = Mutex(State())

    /// What a signal has asked for, if one came.
    public var received: ApplyStop? { state.withLock { $0.received } }

    /// Ignores the default disposition of SIGINT and SIGTERM (which would end the process at once)
    /// and records them instead, until `uninstall`.
    public static func install() -> Interruption {
        let interruption = Interruption()
        let watcher = SignalWatcher { number in
            interruption.receive(number == SIGINT ? .interrupted : .terminated)
        }
        interruption.state.withLock { $0.watcher = watcher }
        return interruption
    }

    /// Called once, on the first signal (to cut a long wait short).
    public func onSignal(_ handler: @escaping @Sendable () -> Void) {
        state.withLock { $0.onSignal = handler }
    }

    /// Restores the default dispositions.
    public func uninstall() {
        let watcher = state.withLock { state in
            defer { state.watcher = nil }
            return state.watcher
        }
        watcher?.cancel()
    }

    func receive(_ stop: ApplyStop) {
        let handler: (@Sendable () -> Void)? = state.withLock { state in
            guard state.received == nil else { return nil }
            state.received = stop
            return state.onSignal
        }
        handler?()
    }
}

extension ApplyStop {
    /// The shell convention: 128 + the signal number; a planned stop is a success.
    public var exitCode: ExitCode {
        switch self {
        case .interrupted: ExitCode(128 + SIGINT)
        case .terminated: ExitCode(128 + SIGTERM)
        case .maxDuration: .success
        }
    }
}
