import Basics
import Foundation
import Reconciler
import RetentionMessagingModels
import StateStore
import Testing

/// A production state record with a scripted review history, and the figures computed by hand.
@Suite("Review time, measured from the state record")
struct ReviewTimesTests {
    static func time(_ text: String) -> UTCTime { StateTime.parse(text)! }
    static let hour: TimeInterval = 3600

    /// A record uploaded at `uploaded` and seen in `states` (state, time) in order.
    static func record(_ id: String, _ kind: ContentRecord.Kind = .message, locale: String?, uploaded: String,
                       _ states: [(String, String)]) -> ContentRecord {
        ContentRecord(identifier: id, kind: kind, name: "winback", locale: locale, contentVersion: "v", firstUploadedAt: time(uploaded),
                      reviewStates: states.map { ObservedReviewState(state: $0.0, firstSeenAt: time($0.1)) })
    }

    static let document: StateDocument = {
        var document = StateDocument(owner: StateOwner(bundleId: "com.example.app", appAppleId: nil, environment: .production))
        document.content = [
            // en-US reviews: 24 h, 48 h, 12 h (rejected), 96 h.
            record("m1", locale: "en-US", uploaded: "2026-11-01T00:00:00.000Z", [("PENDING", "2026-11-01T00:00:00.000Z"), ("APPROVED", "2026-11-02T00:00:00.000Z")]),
            record("m2", locale: "en-US", uploaded: "2026-11-03T00:00:00.000Z", [("PENDING", "2026-11-03T00:00:00.000Z"), ("APPROVED", "2026-11-05T00:00:00.000Z")]),
            record("m3", locale: "en-US", uploaded: "2026-11-06T00:00:00.000Z", [("PENDING", "2026-11-06T00:00:00.000Z"), ("REJECTED", "2026-11-06T12:00:00.000Z")]),
            record("m4", locale: "en-US", uploaded: "2026-11-07T00:00:00.000Z", [("PENDING", "2026-11-07T00:00:00.000Z"), ("APPROVED", "2026-11-11T00:00:00.000Z")]),
            // de-DE reviews: 48 h, 72 h.
            record("m5", locale: "de-DE", uploaded: "2026-11-08T00:00:00.000Z", [("PENDING", "2026-11-08T00:00:00.000Z"), ("APPROVED", "2026-11-10T00:00:00.000Z")]),
            record("m6", locale: "de-DE", uploaded: "2026-11-09T00:00:00.000Z", [("PENDING", "2026-11-09T00:00:00.000Z"), ("APPROVED", "2026-11-12T00:00:00.000Z")]),
            // An image: 30 h, counted overall only. Seen PENDING a run after its upload: the upload starts the clock.
            record("i1", .image, locale: nil, uploaded: "2026-11-02T00:00:00.000Z", [("PENDING", "2026-11-02T01:00:00.000Z"), ("APPROVED", "2026-11-03T06:00:00.000Z")]),
            // Outside the 90-day window (before 2026-08-22): not counted.
            record("m7", locale: "en-US", uploaded: "2026-07-01T00:00:00.000Z", [("PENDING", "2026-07-01T00:00:00.000Z"), ("APPROVED", "2026-07-21T20:00:00.000Z")]),
            // Never seen PENDING: no review to measure.
            record("m8", locale: "en-US", uploaded: "2026-11-04T00:00:00.000Z", [("APPROVED", "2026-11-04T00:00:00.000Z")]),
            // Still pending.
            record("p1", locale: "en-US", uploaded: "2026-11-19T00:00:00.000Z", [("PENDING", "2026-11-19T00:00:00.000Z")]),
            record("p2", locale: "de-DE", uploaded: "2026-11-17T00:00:00.000Z", [("PENDING", "2026-11-17T00:00:00.000Z")]),
            record("p3", locale: "fr-FR", uploaded: "2026-11-10T00:00:00.000Z", [("PENDING", "2026-11-10T00:00:00.000Z")]),
        ]
        return document
    }()

    @Test("median and 90th percentile per environment and per locale match the history")
    func figures() {
        let times = ReviewTimes.measure(Self.document, now: Self.time("2026-11-20T00:00:00.000Z"))
        #expect(times.environment == .production)
        #expect(times.windowDays == 90)
        // Overall, sorted: 12, 24, 30, 48, 48, 72, 96 h. Median: rank 4 = 48 h.
        // 90th: position 0.9 × 6 = 5.4, so 72 + 0.4 × (96 − 72) = 81.6 h = 293,760 s.
        #expect(times.overall == ReviewTimeFigures(count: 7, approved: 6, rejected: 1, median: 48 * Self.hour, p90: 293_760))
        // en-US: 12, 24, 48, 96. Median (24 + 48) / 2 = 36 h; 90th: position 2.7, 48 + 0.7 × 48 = 81.6 h.
        #expect(times.byLocale["en-US"] == ReviewTimeFigures(count: 4, approved: 3, rejected: 1, median: 36 * Self.hour, p90: 293_760))
        // de-DE: 48, 72. Median 60 h; 90th: position 0.9, 48 + 0.9 × 24 = 69.6 h = 250,560 s.
        #expect(times.byLocale["de-DE"] == ReviewTimeFigures(count: 2, approved: 2, rejected: 0, median: 60 * Self.hour, p90: 250_560))
        #expect(times.sortedLocales.map(\.locale) == ["de-DE", "en-US"])
    }

    @Test("pending content: how long it waited and when it is likely decided, with the basis")
    func pendingEstimates() throws {
        let times = ReviewTimes.measure(Self.document, now: Self.time("2026-11-20T00:00:00.000Z"))
        #expect(times.pending.map(\.identifier) == ["p3", "p2", "p1"])
        let (p3, p2, p1) = (times.pending[0], times.pending[1], times.pending[2])
        // en-US has 4 recent reviews (≥ 3): its own median, 36 h after the upload.
        #expect(p1.waited == 24 * Self.hour)
        #expect(p1.estimate == ReviewEstimate(statistic: .median, scope: .locale("en-US"), sampleCount: 4,
                                              likelyBy: Self.time("2026-11-20T12:00:00.000Z")))
        // de-DE has only 2: the overall figures. 72 h waited is past the median (48 h), so the 90th percentile: +81.6 h.
        #expect(p2.waited == 72 * Self.hour)
        #expect(p2.estimate == ReviewEstimate(statistic: .p90, scope: .overall, sampleCount: 7,
                                              likelyBy: Self.time("2026-11-20T09:36:00.000Z")))
        // 240 h is longer than 90% of recent reviews.
        #expect(p3.waited == 240 * Self.hour)
        #expect(p3.estimate == ReviewEstimate(statistic: .overdue, scope: .overall, sampleCount: 7, likelyBy: nil))
    }

    @Test("content the plan reads as APPROVED or REJECTED is not listed as waiting, although the record still says PENDING")
    func decidedSinceTheRecordIsNotWaiting() {
        let times = ReviewTimes.measure(Self.document, now: Self.time("2026-11-20T00:00:00.000Z"),
                                        observed: ["p1": .approved, "p3": .rejected, "p2": .pending])
        #expect(times.pending.map(\.identifier) == ["p2"])
    }

    @Test("with no review in the window there are no figures and no estimate")
    func noHistory() {
        let times = ReviewTimes.measure(Self.document, now: Self.time("2027-06-01T00:00:00.000Z"))
        #expect(times.overall == nil)
        #expect(times.byLocale.isEmpty)
        #expect(times.pending.count == 3)
        #expect(times.pending.allSatisfy { $0.estimate == nil })
    }
}
