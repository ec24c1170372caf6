public import Basics
public import CLIKit
import Foundation
public import Manifests
public import Reconciler
import RetentionMessaging
import RetentionMessagingModels
import Runtime
import Synchronization

/// What `apply --format` takes.
public enum ApplyFormat: String, CaseIterable, Sendable, ArgumentValue {
    case text, github
}

/// What a person watching an apply sees: one line per finished action, the re-list, waits on
/// Apple's rate limits, the outcome. Without a terminal (CI logs) the waits are condensed into a
/// heartbeat at most every `heartbeatInterval` seconds; with `--format github` the log is a
/// collapsible group and failures and blocked actions become annotations.
public final class ApplyProgressView: Sendable {
    let console: Console
    let format: ApplyFormat
    public let clock: any RetentionClock
    let manifests: ManifestSet?
    let base: String

    /// Ready actions listed by name after a stop; the rest are counted.
    static let listedLeft = 20

    /// Seconds between two heartbeats in a log: often enough to show life, rarely enough to read.
    public static let heartbeatInterval: Double = 30

    private struct State {
        var done = 0
        var total = 0
        var started: Double = 0
        var lastHeartbeat: Double?
        var annotations: [String] = []
        var groupOpen = false
        /// What each action of the plan changes, to name its manifest location in an annotation.
        var changes: [String: AnyChange] = [:]
    }
    private let state = Mutex(State())

    public init(console: Console, format: ApplyFormat = .text, clock: any RetentionClock,
         manifests: ManifestSet? = nil, base: String = "") {
        self.console = console
        self.format = format
        self.clock = clock
        self.manifests = manifests
        self.base = base
    }

    public func starting(_ planned: PlanResult) {
        let title = "Applying to \(planned.desired.environment.rawValue):"
        let now = clock.now()
        state.withLock {
            $0.started = now
            $0.total = planned.plan.actions.count
            $0.groupOpen = format == .github
            $0.changes = Dictionary(planned.plan.actions.map { ($0.id.rawValue, $0.change) }, uniquingKeysWith: { first, _ in first })
        }
        if format == .github { console.print(GitHubActions.group(title)) } else { console.print(title) }
    }

    public func nothingToApply(_ plan: Plan) {
        console.print(plan.converged ? "No changes. Nothing to apply." : "Nothing to apply now.")
        // No action runs, so the blocked and error actions are annotated from the plan itself.
        if format == .github {
            for line in GitHubActions.planAnnotations(plan, manifests: manifests, base: base, problems: false) { console.print(line) }
        }
    }

    public func show(_ event: ApplyEvent) {
        switch event {
        case .finished(let result, let done, let total):
            state.withLock {
                $0.done = done
                $0.total = total
            }
            if format == .github, let annotation = annotation(for: result) {
                state.withLock { $0.annotations.append(annotation) }
            }
            guard result.outcome != .blocked && result.outcome != .notInRun else { return }
            console.print(TerminalText.safe("  [\(done)/\(total)] \(result.title): \(Self.outcomeText(result))"))
        case .relisted(let approved):
            let counts = approved.map { kind, count in "\(count) \(kind.rawValue)\(count == 1 ? "" : "s")" }
            console.print("  re-listed: \(counts.joined(separator: " and ")) approved since upload")
        }
    }

    /// The client is about to wait `seconds` (pacing, `Retry-After`, backoff). A terminal shows
    /// every noticeable wait; a log gets a heartbeat at most every `heartbeatInterval`.
    public func waiting(_ seconds: Double, reason: String) {
        let now = clock.now()
        let line: String? = state.withLock { state in
            if console.isTerminal {
                guard seconds >= 1 else { return nil }
            } else {
                if let last = state.lastHeartbeat, now - last < Self.heartbeatInterval { return nil }
                state.lastHeartbeat = now
            }
            return Self.heartbeat(done: state.done, total: state.total, elapsed: now - state.started, wait: seconds, reason: reason)
        }
        if let line { console.print(line) }
    }

    /// `  … 12/40 done; waiting 10 s (pacing …); about 5 min left`: the rest is estimated from the
    /// pace so far, never faster than the wait now imposed per request.
    static func heartbeat(done: Int, total: Int, elapsed: Double, wait: Double, reason: String) -> String {
        let remaining = max(0, total - done)
        let perAction = max(wait, done > 0 ? elapsed / Double(done) : 0)
        return "  … \(done)/\(total) done; waiting \(PlanView.seconds(wait)) (\(reason)); about \(PlanView.seconds(perAction * Double(remaining))) left"
    }

    public func finished(_ report: ApplyReport) {
        closeGroup()
        let blocked = report.count(.blocked)
        console.print("")
        console.print("Apply complete: \(report.count(.done)) done, \(report.count(.alreadyDone)) already there, \(blocked) blocked"
                      + (blocked > 0 ? " (retried by the next reconcile once App Review approves)" : "")
                      + (report.count(.error) > 0 ? ", \(report.count(.error)) in error" : "")
                      + (report.count(.notInRun) > 0 ? ", \(report.count(.notInRun)) not in this run" : "")
                      + "; \(report.requests.total) API request\(report.requests.total == 1 ? "" : "s").")
    }

    /// The apply stopped on purpose before its end: what was done and what is left.
    public func stopped(_ report: ApplyReport, plan: Plan, reason: ApplyStop, maxDuration: String?) {
        closeGroup()
        let remaining = report.remaining ?? 0
        let why = switch reason {
        case .interrupted: "Interrupted (SIGINT)"
        case .terminated: "Terminated (SIGTERM)"
        case .maxDuration: "Stopped at --max-duration \(maxDuration ?? "")"
        }
        console.print("")
        console.print("\(why): \(report.count(.done)) done, \(report.count(.alreadyDone)) already there; "
                      + "\(remaining) action\(remaining == 1 ? "" : "s") left. "
                      + "The next apply picks up where this one stopped (nothing done is repeated).")
        let recorded = Set(report.results.map(\.id))
        let left = plan.actions.filter { $0.state == .ready && !recorded.contains($0.id.rawValue) }
        if !left.isEmpty {
            console.print("Left for the next apply (ready in the plan):")
            for action in left.prefix(Self.listedLeft) { console.print(TerminalText.safe("  - \(action.title)")) }
            if left.count > Self.listedLeft { console.print("  … and \(left.count - Self.listedLeft) more") }
        }
        if format == .github {
            console.print(GitHubActions.annotation(reason == .maxDuration ? .notice : .warning,
                                                   "\(why): \(remaining) action\(remaining == 1 ? "" : "s") left for the next apply",
                                                   title: "apply stopped early"))
        }
    }

    /// Closes the log group (also before a failure is reported) and prints the annotations collected.
    public func closeGroup() {
        let (wasOpen, annotations) = state.withLock { state in
            defer { state.groupOpen = false; state.annotations = [] }
            return (state.groupOpen, state.annotations)
        }
        if wasOpen { console.print(GitHubActions.endGroup) }
        for line in annotations { console.print(line) }
    }

    func annotation(for result: ActionResult) -> String? {
        let level: GitHubActions.Level
        switch result.outcome {
        case .failed, .error: level = .error
        case .blocked: level = .warning
        case .done, .alreadyDone, .skipped, .notInRun: return nil
        }
        let location = state.withLock { $0.changes[result.id] }.flatMap { GitHubActions.location(of: $0, in: manifests, base: base) }
        return GitHubActions.annotation(level, "\(Self.outcomeText(result))" + (result.outcome == .blocked ? ": \(Self.detail(result))" : ""),
                                        title: result.title, location: location)
    }

    /// An action's detail as a person reads it: the Reconciler's words, and the command to run where
    /// the next step is one (the Reconciler names no command-line flag).
    public static func detail(_ result: ActionResult) -> String {
        let detail = result.detail ?? ""
        if result.isRealtimeURLAwaitingTest {
            return detail + "; run '\(PerformanceTestView.invocation)', then apply again"
        }
        return detail
    }

    static func outcomeText(_ result: ActionResult) -> String {
        switch result.outcome {
        case .done: "done"
        case .alreadyDone: "already there"
        case .skipped: "skipped (\(Self.detail(result)))"
        case .failed: "FAILED (\(Self.detail(result)))"
        case .blocked: "blocked"
        case .error: "error (\(Self.detail(result)))"
        case .notInRun: "not in this run (\(Self.detail(result)))"
        }
    }
}
