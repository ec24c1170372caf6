import Dispatch
import Foundation
import Reconciler
import Synchronization

/// Turns SIGINT and SIGTERM into a request to stop, so that apply can finish the action in flight,
/// write its report and exit 130 or 143 instead of dying half-way with nothing recorded.
final class Interruption: Sendable {
    private struct State {
        var received: ApplyStop?
        var onSignal: (@Sendable () -> Void)?
    }

    private let state = Mutex(State())
    /// Kept alive until `uninstall`; only touched by `install` and `uninstall` on the command's task.
    nonisolated(unsafe) private var watcher: SignalWatcher?

    /// What a signal has asked for, if one came.
    var received: ApplyStop? { state.withLock { $0.received } }

    /// Ignores the default disposition of SIGINT and SIGTERM (which would end the process at once)
    /// and records them instead, until `uninstall`.
    static func install() -> Interruption {
        let interruption = Interruption()
        interruption.watcher = SignalWatcher { number in
            interruption.receive(number == SIGINT ? .interrupted : .terminated)
        }
        return interruption
    }

    /// Called once, on the first signal (to cut a long wait short).
    func onSignal(_ handler: @escaping @Sendable () -> Void) {
        state.withLock { $0.onSignal = handler }
    }

    /// Restores the default dispositions.
    func uninstall() {
        watcher?.cancel()
        watcher = nil
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
    var exitCode: ExitCode {
        switch self {
        case .interrupted: ExitCode(128 + SIGINT)
        case .terminated: ExitCode(128 + SIGTERM)
        case .maxDuration: .success
        }
    }
}
