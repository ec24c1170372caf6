import Dispatch
public import Foundation
import Synchronization

/// Turns signals into calls instead of their default disposition (which ends the process at once),
/// for as long as it is not cancelled; `cancel` restores the defaults. One mechanism for `serve`
/// (drain on SIGTERM, reload on SIGHUP), the emulator (write its state) and apply (write the report).
public final class SignalWatcher: Sendable {
    private let sources: Mutex<[any DispatchSourceSignal]>
    private let numbers: [Int32]

    public static func name(of number: Int32) -> String {
        switch number {
        case SIGINT: "SIGINT"
        case SIGTERM: "SIGTERM"
        case SIGHUP: "SIGHUP"
        default: "signal \(number)"
        }
    }

    public init(_ numbers: [Int32] = [SIGINT, SIGTERM], handler: @escaping @Sendable (Int32) -> Void) {
        self.numbers = numbers
        sources = Mutex(numbers.map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { handler(number) }
            source.resume()
            return source
        })
    }

    public func cancel() {
        let cancelled = sources.withLock { sources -> [any DispatchSourceSignal] in
            defer { sources = [] }
            return sources
        }
        for source in cancelled { source.cancel() }
        for number in numbers { signal(number, SIG_DFL) }
    }
}
