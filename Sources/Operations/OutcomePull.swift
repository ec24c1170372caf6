import EventContract
public import EventStore
import Foundation
public import RetentionMessagingModels
import RetentionMessaging
public import Runtime
public import StateStore

/// Reads Get Notification History from a cursor kept beside the events, verifies every notification
/// exactly as `serve` does, and records each one about a customer as an outcome event.
///
/// The window starts an hour before where the last run ended (late retries land in history under
/// their first attempt; an outcome read twice is one event to every reader, its id being Apple's
/// `notificationUUID`), or — on the first run — as far back as Apple keeps history (180 days in
/// production, 30 in sandbox). The cursor moves only after every page was read and recorded.
public struct OutcomePull: Sendable {
    public typealias Fetch = @Sendable (NotificationHistoryRequest, String?) async throws -> NotificationHistoryResponse

    public var environment: Environment
    public var verifier: NotificationVerifier
    public var pseudonyms: PseudonymKey
    /// During a rotation, the key being replaced: every outcome is recorded under it too.
    public var previousPseudonyms: PseudonymKey?
    public var recorder: EventRecorder
    public var store: any ObjectStore
    public var fetch: Fetch
    /// Told at once (before any page is read) when something about the run needs a person.
    public var warn: @Sendable (String) -> Void = { _ in }

    public static let overlap: Int64 = 3_600_000

    public struct Cursor: Codable, Sendable, Equatable {
        public var schema = 1
        /// The `endDate` (ms) every record before which has been read.
        public var until: Int64

        public init(until: Int64) {
            self.until = until
        }
    }

    public struct Summary: Sendable, Equatable {
        public var startDate: Int64
        public var endDate: Int64
        public var pages = 0
        public var notifications = 0
        public var recorded = 0
        public var notAboutACustomer = 0
        public var refused: [String: Int] = [:]
        public var restartedAfterExpiredToken = false
        /// Set when the cursor is older than Apple keeps history: outcomes in this span cannot be read any more.
        public var lostSpan: ClosedRange<Int64>?
        /// Set when the newest decisions stored carry pseudonym keys and none is this run's: the secret differs.
        public var keyMismatch: (ours: String, stored: [String])?

        public static func == (lhs: Summary, rhs: Summary) -> Bool {
            (lhs.startDate, lhs.endDate, lhs.pages, lhs.notifications, lhs.recorded, lhs.notAboutACustomer) ==
                (rhs.startDate, rhs.endDate, rhs.pages, rhs.notifications, rhs.recorded, rhs.notAboutACustomer)
                && lhs.refused == rhs.refused && lhs.restartedAfterExpiredToken == rhs.restartedAfterExpiredToken
                && lhs.lostSpan == rhs.lostSpan && lhs.keyMismatch?.ours == rhs.keyMismatch?.ours
                && lhs.keyMismatch?.stored == rhs.keyMismatch?.stored
        }
    }

    public init(environment: Environment, verifier: NotificationVerifier, pseudonyms: PseudonymKey, recorder: EventRecorder,
                store: any ObjectStore, fetch: @escaping Fetch) {
        self.environment = environment
        self.verifier = verifier
        self.pseudonyms = pseudonyms
        self.recorder = recorder
        self.store = store
        self.fetch = fetch
    }

    var cursorKey: String { "events/v1/cursors/outcomes-pull/environment=\(environment.rawValue).json" }

    /// How many days back from the window's end to look for the decisions serve stored.
    static let decisionLookbackDays = 14

    /// The pseudonym keys of the newest decisions stored for the environment — the newest three segments
    /// of the latest day with any, within `decisionLookbackDays` of `time` — or nil when none are stored.
    func storedDecisionKeys(near time: Int64) async throws -> Set<String>? {
        let base = "events/v1/decisions/environment=\(environment.rawValue)/"
        for daysBack in 0 ... Int64(Self.decisionLookbackDays) {
            let (date, _) = EventTime.partition(time - daysBack * EventTime.day)
            let segments = try await store.list(prefix: base + "date=\(date)/").filter { $0.hasSuffix(".ndjson") }
            guard !segments.isEmpty else { continue }
            var keys: Set<String> = []
            for key in segments.sorted().suffix(3) {
                guard let data = try await store.get(key) else { continue }
                for line in data.split(separator: 0x0A) {
                    guard let object = try? JSONSerialization.jsonObject(with: Data(line)) as? [String: Any],
                          object["customer"] is String, let keyId = object["keyId"] as? String else { continue }
                    keys.insert(keyId)
                }
            }
            if !keys.isEmpty { return keys }
        }
        return nil
    }

    static func keyMismatchText(ours: String, stored: [String]) -> String {
        "this run's RETENTION_SYNC_PSEUDONYM_SECRET has key id \(ours), but the newest decisions serve stored carry "
            + "\(stored.joined(separator: ", ")): with a different secret the outcomes recorded now never join a decision (results warns "
            + "about them for as long as they are in its window); give the outcomes job the same secret as serve — unless the secret was just "
            + "rotated on every replica, in which case this clears once serve records decisions under the new key"
    }

    func readCursor() async throws -> Cursor? {
        guard let data = try await store.get(cursorKey) else { return nil }
        do {
            return try JSONDecoder().decode(Cursor.self, from: data)
        } catch {
            throw OutcomePullError("\(store.location)/\(cursorKey) is not a cursor this version reads (\(error)); "
                               + "move it away to read history again from the start (outcomes are de-duplicated)")
        }
    }

    /// A first backfill starts this many days inside the history Apple keeps (179 of 180 days in
    /// production), so a clock a little ahead of this machine's does not refuse the start date.
    public static let backfillMarginDays = 1

    /// The window to read: from `since`, else the cursor less the overlap, never before what Apple
    /// keeps less `backfillMarginDays`.
    func window(since: Int64?, until: Int64, cursor: Cursor?) -> (start: Int64, end: Int64, lost: ClosedRange<Int64>?) {
        let oldest = until - Int64(NotificationHistoryFacts.days(environment) - Self.backfillMarginDays) * 86_400_000
        let start = since ?? cursor.map { $0.until - Self.overlap } ?? oldest
        let lost = since == nil && cursor != nil && start < oldest ? start...oldest : nil
        return (max(start, oldest), until, lost)
    }

    /// Reads and records the window. `untilGiven` says whether `until` came from the command line (a
    /// window that starts after it is then the command line's mistake, exit 64) or is now.
    public func run(since: Int64?, until: Int64, untilGiven: Bool = true) async throws -> Summary {
        let cursor = try await readCursor()
        let (start, end, lost) = window(since: since, until: until, cursor: cursor)
        if start > end {
            // Only the cursor can put the start there: `since` after `until` is refused before this.
            if untilGiven {
                throw OutcomePullError("the window would start at \(EventTime.format(start)) (an hour before where the last run ended) but "
                                   + "--until is \(EventTime.format(end)), earlier: give --since too to read an earlier window",
                                   usage: true)
            }
            throw OutcomePullError("the cursor \(store.location)/\(cursorKey) says the last run read up to \(EventTime.format(start + Self.overlap)), "
                               + "later than now (\(EventTime.format(end))): an earlier run's --until lay in the future, or this machine's clock "
                               + "is behind; give --since to choose the window (outcomes are de-duplicated), or move the cursor away")
        }
        var summary = Summary(startDate: start, endDate: end)
        summary.lostSpan = lost
        if let stored = try await storedDecisionKeys(near: end), !stored.contains(pseudonyms.keyId),
           !stored.contains(previousPseudonyms?.keyId ?? pseudonyms.keyId) {
            summary.keyMismatch = (pseudonyms.keyId, stored.sorted())
            warn(Self.keyMismatchText(ours: pseudonyms.keyId, stored: stored.sorted()))
        }
        guard start < end else { return summary }
        let request = NotificationHistoryRequest(startDate: start, endDate: end)
        var token: String?
        var restarted = false
        while true {
            let page: NotificationHistoryResponse
            do {
                page = try await fetch(request, token)
            } catch let error as RetentionMessagingError where error.errorCode == NotificationHistoryFacts.paginationTokenExpired && !restarted {
                // The token outlived its life (a long backfill): read the window again from its start.
                restarted = true
                summary.restartedAfterExpiredToken = true
                token = nil
                continue
            }
            summary.pages += 1
            for item in page.notificationHistory ?? [] {
                guard let signed = item.signedPayload else { continue }
                summary.notifications += 1
                do {
                    let verified = try verifier.verify(signedPayload: signed)
                    if let facts = OutcomeFacts(verified, environment: environment, pseudonyms: pseudonyms, source: .pull) {
                        recorder.record(facts.record())
                        if let previousPseudonyms,
                           let copy = OutcomeFacts(verified, environment: environment, pseudonyms: previousPseudonyms, source: .pull) {
                            recorder.record(copy.record())
                        }
                        summary.recorded += 1
                    } else {
                        summary.notAboutACustomer += 1
                    }
                } catch {
                    summary.refused[error.reason, default: 0] += 1
                }
            }
            guard page.hasMore == true, let next = page.paginationToken else { break }
            token = next
        }
        let counters = await recorder.close()
        if counters.spooledSegments > 0 || !counters.dropped.isEmpty {
            throw OutcomePullError("the outcomes could not all be stored at \(recorder.sink.location) (\(counters.spooledSegments) segment(s) "
                               + "left in the spool \(recorder.settings.spool.path)); the cursor was not moved, so the next run reads them again")
        }
        let encoded = try JSONEncoder().encode(Cursor(until: end))
        do {
            try await store.put(cursorKey, Array(encoded))
        } catch {
            throw OutcomePullError("the outcomes were stored, but the cursor could not be written (\(error.description)); the next run reads this window again")
        }
        return summary
    }
}

/// Why a pull stopped before moving the cursor, worded for the person running it. `usage` when
/// what was asked cannot be done (a window that starts before the cursor allows), so the command
/// exits as for a wrong argument.
public struct OutcomePullError: Error, Sendable, CustomStringConvertible {
    public var description: String
    public var usage: Bool

    init(_ description: String, usage: Bool = false) {
        self.description = description
        self.usage = usage
    }
}
