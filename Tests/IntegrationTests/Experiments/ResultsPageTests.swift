import Basics
import Crypto
import EventContract
import Foundation
@testable import ExperimentsTestSupport
import Testing
import TestSupport
@testable import Experiments
@testable import Views

/// `results --format html`: the page a person opens to see which arm keeps more subscribers. Its
/// charts are read back from the SVG — by the tick labels a person reads — and compared with the
/// report's numbers.
@Suite("Reading the results as a page")
struct ResultsPageTests {
    static let control = EventSimulator.Arm(rule: "keep-message", keepRate: 0.30, splitControl: true)
    static let treatment = EventSimulator.Arm(rule: "upsell-yearly", keepRate: 0.40, answer: "promotionalOffer", offer: "yearly-half-price")

    /// Two weeks of a 30% control against a 40% offer; the report runs six hours into the 16th day.
    static func simulation(arms: [EventSimulator.Arm] = [control, treatment], flow: String = "cancel-flow", customers: Int = 3000,
                           seed: UInt64 = 34) throws -> (root: URL, now: UTCTime) {
        var simulator = EventSimulator(arms: arms, customers: customers)
        simulator.flow = flow
        simulator.days = 14
        simulator.run(seed: seed)
        let root = try temporaryFolder("results-page")
        try simulator.write(to: root)
        return (root, UTCTime(milliseconds: simulator.start + 15 * EventTime.day + 6 * EventTime.hour))
    }

    static func page(_ root: URL, now: UTCTime) throws -> (ResultsReport, ResultsTimeline, String) {
        // The simulation writes every customer's later renewals too: the run's clock is after them all.
        let (report, timeline) = try ResultsReport.computeWithTimeline(source: FolderEventSource(root: root), environment: "production", now: now,
                                                                       clock: now.adding(seconds: 365 * 86400))
        return (report, timeline, report.html(timeline: timeline))
    }

    @Test func aSimulatedExperimentDrawsEachArmsRateAndIntervalWhereTheReportSaysThem() throws {
        let (root, now) = try Self.simulation()
        defer { try? FileManager.default.removeItem(at: root) }
        let (report, _, html) = try Self.page(root, now: now)
        let svg = try #require(SVG.all(in: html, class: "rates").first)
        let axis = try SVG.axis(svg, vertical: false, label: SVG.percent)
        #expect(report.rows.count == 2)
        for row in report.rows {
            let rate = try #require(row.kept24h.rate), interval = try #require(row.kept24h.interval)
            let dot = try #require(SVG.elements(svg, "circle", class: "rate").first { $0["data-rule"] == row.rule }, "\(row.rule) has no dot")
            let bar = try #require(SVG.elements(svg, "line", class: "interval").first { $0["data-rule"] == row.rule })
            #expect(abs(axis(dot.double("cx")) - rate) < 0.0005, "\(row.rule): dot at \(axis(dot.double("cx"))), rate \(rate)")
            #expect(abs(axis(bar.double("x1")) - interval.low) < 0.0005)
            #expect(abs(axis(bar.double("x2")) - interval.high) < 0.0005)
            #expect(dot.double("cy") == bar.double("y1"))
        }
        // The simulation's truth lies inside each arm's interval.
        #expect(report.rows.map { $0.kept24h.interval?.contains($0.rule == "keep-message" ? 0.30 : 0.40) } == [true, true])
    }

    @Test func theDifferenceOverTimeNarrowsAsCustomersAccrueAndEndsOnTheReportsNumber() throws {
        let (root, now) = try Self.simulation()
        defer { try? FileManager.default.removeItem(at: root) }
        let (report, timeline, html) = try Self.page(root, now: now)
        let comparison = try #require(report.comparisons.first)
        let arm = try #require(comparison.arms.first)
        let points = try #require(timeline.kept24hDifferences(comparison)[arm.rule])
        // The first day's end through the 15th, then the report's own look.
        #expect(points.count == 16)
        #expect(points.last?.difference == arm.kept24h)
        let svg = try #require(SVG.all(in: html, class: "difference").first)
        let axis = try SVG.axis(svg, vertical: true, label: SVG.points)
        let dots = SVG.elements(svg, "circle", class: "diff")
        let bars = SVG.elements(svg, "line", class: "diff-interval")
        // While a rate is early a look shows the bounds of the difference, dashed, and no dot.
        #expect(dots.count == points.filter { $0.difference.difference != nil && $0.bounds == nil }.count)
        #expect(SVG.elements(svg, "line", class: "diff-bounds").count == points.filter { $0.bounds != nil }.count)
        for point in points where point.bounds == nil {
            guard let value = point.difference.difference, let interval = point.difference.interval else { continue }
            let dot = try #require(dots.first { $0["data-time"] == EventTime.format(point.time) }, "no dot for \(point.day)")
            let bar = try #require(bars.first { $0["data-day"] == point.day && $0["x1"] == dot["cx"] })
            #expect(abs(axis(dot.double("cy")) - value) < 0.0005, "\(point.day): dot at \(axis(dot.double("cy"))), difference \(value)")
            #expect(abs(axis(bar.double("y1")) - interval.low) < 0.0005)
            #expect(abs(axis(bar.double("y2")) - interval.high) < 0.0005)
        }
        // Dots run left to right in time.
        let xs = dots.map { $0.double("cx") }
        #expect(xs == xs.sorted() && Set(xs).count == xs.count)
        let zero = try #require(SVG.elements(svg, "line", class: "zero").first)
        #expect(abs(axis(zero.double("y1"))) < 0.0005)
        // Narrowing: the last interval is far narrower than the first.
        let widths = points.compactMap { $0.difference.interval.map { $0.high - $0.low } }
        let (firstWidth, lastWidth) = (try #require(widths.first), try #require(widths.last))
        #expect(lastWidth < firstWidth / 3, "\(widths)")
        // Ten points apart with 1,500 customers an arm: told apart within the fortnight, and the line
        // marks the first look of the run of looks that exclude zero.
        #expect(arm.kept24h.verdict == .better)
        let marker = try #require(SVG.elements(svg, "line", class: "distinguishable").first)
        let lastUnclear = try #require(points.lastIndex { $0.difference.verdict != .better })
        #expect(marker["data-day"] == points[lastUnclear + 1].day)
        #expect(html.contains("distinguishable from \(points[lastUnclear + 1].day)"))
    }

    @Test func theDailySeriesIsWhatAReportRunAtEachDaysEndWouldHaveSaid() throws {
        let (root, now) = try Self.simulation(customers: 1200)
        defer { try? FileManager.default.removeItem(at: root) }
        let (report, timeline, _) = try Self.page(root, now: now)
        let comparison = try #require(report.comparisons.first)
        let points = try #require(timeline.kept24hDifferences(comparison)["upsell-yearly"])
        for point in points.dropLast() {
            let then = try ResultsReport.compute(source: FolderEventSource(root: root), environment: "production",
                                                 now: UTCTime(milliseconds: point.time))
            let arm = try #require(then.comparisons.first?.arms.first)
            // The series draws the plain difference; the adjusted one is the report's alone.
            var plain = arm.kept24h
            plain.adjusted = nil
            #expect(plain == point.difference, "\(point.day)")
        }
    }

    @Test func exposuresPerArmPerDayAddUpToEachArmsCustomers() throws {
        let (root, now) = try Self.simulation()
        defer { try? FileManager.default.removeItem(at: root) }
        let (report, _, html) = try Self.page(root, now: now)
        let svg = try #require(SVG.all(in: html, class: "exposures").first)
        let axis = try SVG.axis(svg, vertical: true, label: { Double($0.replacingOccurrences(of: ",", with: "")) })
        for row in report.rows {
            let dots = SVG.elements(svg, "circle", class: "exposed").filter { $0["data-rule"] == row.rule }
            // Fourteen days of exposures, then the day after them and the report's own day, with none.
            #expect(dots.count == 16, "\(row.rule): one dot a day")
            #expect(dots.suffix(2).map { $0.double("data-count") } == [0, 0])
            #expect(dots.reduce(0) { $0 + Int($1.double("data-count")) } == row.exposed)
            for dot in dots {
                #expect(abs(axis(dot.double("cy")) - dot.double("data-count")) < 0.05)
            }
        }
        // A fortnight in, no customer's money is decided yet (35 days and 7 for late notifications): no chart.
        #expect(SVG.all(in: html, class: "paid").isEmpty && report.rows.allSatisfy { $0.paid.decided == 0 })
        #expect(html.contains("none decided yet"))
    }

    @Test func onceDecidedEachArmsPaidPerCustomerIsDrawnWithItsInterval() throws {
        let (root, fortnight) = try Self.simulation()
        defer { try? FileManager.default.removeItem(at: root) }
        let (report, _, html) = try Self.page(root, now: fortnight.adding(seconds: 45 * 86400))
        let paid = try #require(SVG.all(in: html, class: "paid").first)
        for row in report.rows {
            let amount = try #require(row.paid.currencies["USD"])
            #expect(row.paid.decided == row.exposed)
            let dot = try #require(SVG.elements(paid, "circle", class: "paid").first { $0["data-rule"] == row.rule })
            #expect(abs(dot.double("data-milliunits") - amount.perCustomer) < 0.001)
            #expect(html.contains(">\(ResultsReport.describe(amount, decided: row.paid.decided))</text>"))
        }
    }

    @Test func thePageSaysTheSameNumbersAsTheTextReport() throws {
        let (root, now) = try Self.simulation()
        defer { try? FileManager.default.removeItem(at: root) }
        let (report, _, html) = try Self.page(root, now: now)
        let text = report.text()
        for row in report.rows {
            for figure in [ResultsReport.describe(row.kept24h), ResultsReport.describe(row.renewed)] {
                #expect(text.contains(figure) && html.contains(figure), "\(figure)")
            }
        }
        let arm = try #require(report.comparisons.first?.arms.first)
        let sentence = "kept at 24 h \(ResultsReport.sentence(arm.kept24h))"
        #expect(text.contains(sentence) && html.contains(sentence))
        for entry in report.legend { #expect(html.contains(ResultsHTMLStyle.escape(entry.meaning))) }
        #expect(html.contains("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">"))
        #expect(!html.contains("<script"))
    }

    @Test func aHostileRuleOrFlowNameShowsAsTextAndNeverAsMarkup() throws {
        let hostile = "<script>alert('x')</script></style><img src=x onerror=alert(1)>&amp;"
        let arms = [EventSimulator.Arm(rule: hostile, keepRate: 0.3, splitControl: true), EventSimulator.Arm(rule: "b</title>", keepRate: 0.3)]
        let (root, now) = try Self.simulation(arms: arms, flow: "</svg><svg onload=alert(2)>", customers: 300)
        defer { try? FileManager.default.removeItem(at: root) }
        let (report, _, html) = try Self.page(root, now: now)
        #expect(report.rows.map(\.rule).contains(hostile))
        #expect(!html.contains("<script"))
        #expect(!html.contains("<img"))
        #expect(!html.contains("<svg onload"))
        #expect(!html.contains("b</title>"))
        #expect(html.components(separatedBy: "</style>").count == 2)
        #expect(html.components(separatedBy: "<title>").count == html.components(separatedBy: "</title>").count)
        #expect(html.contains("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&lt;/style&gt;&lt;img src=x onerror=alert(1)&gt;&amp;amp;"))
        #expect(html.contains("data-rule=\"&lt;script&gt;"))
    }

    @Test func aGroupReweightedMidExperimentIsDrawnOncePerPeriodEachFromItsOwnStart() throws {
        var random = SplitMix64(seed: 34)
        let start = try #require(EventTime.parse("2026-10-01T00:00:00.000Z"))
        let switchover = start + 6 * EventTime.day
        var decisions: [String] = [], outcomes: [String] = []
        for _ in 0 ..< 1500 {
            let customer = random.hex(64)
            let bucket = Int(random.below(10_000))
            let exposure = start + random.below(12 * EventTime.day)
            let layout = exposure < switchover ? Period.first : Period.second
            let rule = Period.arm(bucket, layout)
            decisions.append(Period.decision(customer, time: exposure, rule: rule, layout: layout, random: &random))
            if !random.chance(rule == "keep-message" ? 0.3 : 0.5) {
                outcomes.append(Join.outcome(customer, EventTime.format(exposure + EventTime.hour), "DID_CHANGE_RENEWAL_STATUS",
                                                  subtype: "AUTO_RENEW_DISABLED"))
            }
        }
        let (report, timeline) = try ResultsReport.computeWithTimeline(
            source: Join.source(decisions: decisions, outcomes: outcomes), environment: "production",
            now: UTCTime(milliseconds: start + 14 * EventTime.day))
        let html = report.html(timeline: timeline)
        #expect(report.comparisons.count == 2)
        let charts = SVG.all(in: html, class: "difference").filter { $0.hasPrefix(" data-metric=\"kept24h\"") }
        #expect(charts.count == 2)
        #expect(SVG.all(in: html, class: "difference").count == 4, "kept at 24 h and renewed, per period")
        for (comparison, svg) in zip(report.comparisons, charts) {
            let points = try #require(timeline.kept24hDifferences(comparison)["upsell-yearly"])
            #expect(points.first?.day == comparison.periodSince.map { String($0.prefix(10)) })
            #expect(points.last?.difference == comparison.arms.first?.kept24h)
            // At the end of the period's first day no customer's 24 hours are over yet: no data, no dot.
            #expect(points.first?.difference.verdict == .noData)
            #expect(SVG.elements(svg, "circle", class: "diff").count == points.filter { $0.difference.difference != nil && $0.bounds == nil }.count)
            #expect(html.contains(ResultsHTMLStyle.escape(report.periodPhrase(comparison))), "\(report.periodPhrase(comparison))")
        }
        #expect(SVG.all(in: html, class: "rates").count == 2)
    }

    @Test func renewedAndTookOfferAreDrawnAtEveryDaysEndWithBoundsWhileEarlyAndEndOnTheReportsNumbers() throws {
        let (root, fortnight) = try Self.simulation(customers: 1500)
        defer { try? FileManager.default.removeItem(at: root) }
        // Forty days on, most renewals are decided; in the first weeks most were pending.
        let (report, timeline, html) = try Self.page(root, now: fortnight.adding(seconds: 40 * 86400))
        let comparison = try #require(report.comparisons.first)
        let arm = try #require(comparison.arms.first)
        let points = try #require(timeline.differences(comparison, of: .renewed)[arm.rule])
        #expect(points.last?.difference == arm.renewed)
        #expect(points.contains { $0.bounds != nil } && points.last?.bounds == nil)
        let renewed = try #require(SVG.all(in: html, class: "difference").first { $0.hasPrefix(" data-metric=\"renewed\"") })
        let axis = try SVG.axis(renewed, vertical: true, label: SVG.points)
        let dots = SVG.elements(renewed, "circle", class: "diff")
        #expect(dots.count == points.filter { $0.difference.difference != nil && $0.bounds == nil }.count)
        #expect(SVG.elements(renewed, "line", class: "diff-bounds").count == points.filter { $0.bounds != nil }.count)
        let last = try #require(dots.last), value = try #require(arm.renewed.difference)
        #expect(abs(axis(last.double("cy")) - value) < 0.0005, "the last dot is the report's renewed difference")
        // Took offer: only the arm that offers something, a look a day, its last the report's row.
        let took = try #require(SVG.all(in: html, class: "took-offer").first)
        let row = try #require(report.rows.first { $0.rule == arm.rule })
        let rates = try #require(timeline.rates(comparison, of: .tookOffer)[arm.rule])
        let looks = SVG.elements(took, "circle", class: "rate-look")
        #expect(Set(looks.compactMap { $0["data-rule"] }) == [arm.rule])
        #expect(looks.count == rates.filter { !$0.rate.early && $0.rate.rate != nil }.count)
        #expect(SVG.elements(took, "line", class: "rate-bounds").count == rates.filter { $0.rate.early && $0.rate.bounds != nil }.count)
        let rateAxis = try SVG.axis(took, vertical: true, label: SVG.percent)
        let tookRate = try #require(row.tookOffer?.rate)
        #expect(abs(rateAxis(try #require(looks.last).double("cy")) - tookRate) < 0.0005)
    }

    @Test func eachArmsRetentionCurveIsAStepLineWithTheReportsSharesAtTheMarkedDays() throws {
        let (root, fortnight) = try Self.simulation()
        defer { try? FileManager.default.removeItem(at: root) }
        let (report, _, html) = try Self.page(root, now: fortnight.adding(seconds: 40 * 86400))
        let svg = try #require(SVG.all(in: html, class: "retention").first)
        let axis = try SVG.axis(svg, vertical: true, label: SVG.percent)
        #expect(SVG.elements(svg, "path", class: "survival").map { $0["data-rule"] } == ["keep-message", "upsell-yearly"])
        for row in report.rows {
            let curve = try #require(row.retention)
            let marked = [1, 7, 14, 30, 60, 90].filter { $0 < curve.count }
            #expect(marked == [1, 7, 14, 30], "observed for \(curve.count - 1) days")
            let dots = SVG.elements(svg, "circle", class: "survival-point").filter { $0["data-rule"] == row.rule }
            #expect(dots.map { Int($0.double("data-day")) } == marked)
            for dot in dots {
                let point = curve[Int(dot.double("data-day"))]
                #expect(abs(axis(dot.double("cy")) - point.subscribed) < 0.0005, "\(row.rule) day \(point.day)")
                #expect(html.contains(">\(ResultsHTMLStyle.escape(ResultsReport.describe(point)))</td>"), "the table beside it says it too")
            }
        }
        // The holdout of this simulation keeps 30% at 24 h, the offer 40%: fewer of the holdout's customers are still subscribed at day 30.
        let day30 = report.rows.map { $0.retention?[30].subscribed ?? 0 }
        #expect(day30[0] < day30[1])
    }

    @Test func theSameEventsGiveTheSameBytes() throws {
        let (first, now) = try Self.simulation()
        let (second, _) = try Self.simulation()
        defer {
            try? FileManager.default.removeItem(at: first)
            try? FileManager.default.removeItem(at: second)
        }
        let a = try Self.page(first, now: now).2, b = try Self.page(first, now: now).2, c = try Self.page(second, now: now).2
        #expect(a == b)
        #expect(a == c)
        #expect(a.utf8.count > 10_000)
    }
}

/// The page in Chromium, as a person opens it: nothing requested, the texts there, nothing wider
/// than the window on a phone or a laptop. Chromium is required; without it this fails and says how
/// to install it.
@Suite("Looking at the results page in a browser", .serialized)
struct ResultsPageBrowserTests {
    static let artifacts = Repository.url(".build/test-artifacts/results")

    /// Added to a copy of the page (the page itself carries no script, and its policy forbids one):
    /// every element reaching past the window's sides, or an SVG text past its chart's, sent to the
    /// frame around it.
    static let script = """
    <script>
    window.addEventListener('load', () => {
      const out = {width: window.innerWidth, scrollWidth: document.documentElement.scrollWidth, overflow: [],
                   resources: performance.getEntriesByType('resource').map(e => e.name), text: document.body.innerText,
                   counts: Object.fromEntries(['svg.retention path.survival', 'svg.retention circle.survival-point', 'svg.took-offer circle.rate-look',
                     'svg.took-offer line.rate-bounds', 'svg.difference[data-metric="renewed"] circle.diff', 'svg.difference[data-metric="renewed"] line.diff-bounds',
                     'table.retention-table tbody tr', 'script'].map(s => [s, document.querySelectorAll(s).length]))};
      for (const element of document.body.querySelectorAll('*')) {
        if (element.tagName === 'SCRIPT') continue;
        const r = element.getBoundingClientRect();
        if (r.width === 0 && r.height === 0) continue;
        const name = '<' + element.tagName.toLowerCase() + ' class="' + (element.getAttribute('class') || '') + '"> "' + (element.textContent || '').slice(0, 40) + '"';
        if (r.left < -0.5 || r.right > window.innerWidth + 0.5) out.overflow.push(name + ' reaches outside the window: ' + r.left + '–' + r.right);
        const svg = element.closest('svg');
        if (svg && element.tagName.toLowerCase() === 'text') {
          const box = svg.getBoundingClientRect();
          if (r.left < box.left - 0.5 || r.right > box.right + 0.5) out.overflow.push(name + ' reaches outside its chart');
        }
      }
      parent.postMessage(btoa(unescape(encodeURIComponent(JSON.stringify(out)))), '*');
    });
    </script>
    """

    struct Measure: Decodable {
        var width: Double
        var scrollWidth: Double
        var overflow: [String]
        var resources: [String]
        var text: String
        /// Elements per selector, as the browser built them.
        var counts: [String: Int]
    }

    static func measure(_ page: URL, width: Int, chromium: Chromium) async throws -> Measure {
        var html = try String(contentsOf: page, encoding: .utf8)
        html = html.replacingOccurrences(of: "img-src data:\">", with: "img-src data:; script-src 'unsafe-inline'\">")
            .replacingOccurrences(of: "</body>", with: script + "\n</body>")
        let folder = page.deletingLastPathComponent()
        try Data(html.utf8).write(to: folder.appendingPathComponent("measured.html"))
        let frame = folder.appendingPathComponent("frame-\(width).html")
        try Data(Chromium.frame("measured.html", width: width, height: 1000, listen: true).utf8).write(to: frame)
        let dom = try await chromium.dumpDOM(frame, width: max(width, Chromium.minimumWindowWidth))
        guard let start = dom.range(of: "<pre id=\"__measure\">"), let stop = dom.range(of: "</pre>", range: start.upperBound..<dom.endIndex),
              let data = Data(base64Encoded: String(dom[start.upperBound..<stop.lowerBound])) else {
            throw PageFailure(description: "the measuring script left no result at \(width) px")
        }
        return try JSONDecoder().decode(Measure.self, from: data)
    }

    @Test func thePageLoadsWithNoRequestShowsItsNumbersAndFitsAPhoneAndALaptop() async throws {
        let chromium = try Chromium.require()
        let (root, now) = try ResultsPageTests.simulation()
        defer { try? FileManager.default.removeItem(at: root) }
        let (report, _, html) = try ResultsPageTests.page(root, now: now)
        let folder = try temporaryFolder("results-page-browser")
        defer { try? FileManager.default.removeItem(at: folder) }
        let page = folder.appendingPathComponent("results.html")
        try Data(html.utf8).write(to: page)
        try FileManager.default.createDirectory(at: Self.artifacts, withIntermediateDirectories: true)
        for width in [390, 1200] {
            let measure = try await Self.measure(page, width: width, chromium: chromium)
            #expect(measure.width == Double(width))
            #expect(measure.overflow.isEmpty, "\(width) px: \(measure.overflow)")
            #expect(measure.scrollWidth <= Double(width), "\(width) px: the page scrolls sideways (\(measure.scrollWidth) px)")
            #expect(measure.resources.isEmpty, "\(width) px fetched \(measure.resources)")
            let arm = try #require(report.comparisons.first?.arms.first)
            for text in ["Results for production", "Split group cancel-flow / yearly-upsell", ResultsReport.describe(report.rows[0].kept24h),
                         ResultsReport.sentence(arm.kept24h), "How to read this", "Distinguishable from the control from"] {
                #expect(measure.text.contains(text), "\(width) px lacks \(text)")
            }
            // The page as written, unmodified, in a frame of the width: a screenshot to look at.
            let shot = folder.appendingPathComponent("shot-\(width).html")
            try Data(Chromium.frame("results.html", width: width, height: 2600, listen: false).utf8).write(to: shot)
            try await chromium.screenshot(shot, to: Self.artifacts.appendingPathComponent("results-\(width).png"), width: max(width, Chromium.minimumWindowWidth), height: 2600)
        }
        // The page alone, unmodified: Chromium's log of every request it made.
        let netLog = folder.appendingPathComponent("netlog.json")
        try await chromium.screenshot(page, to: folder.appendingPathComponent("results.png"), width: 1200, height: 1200, netLog: netLog)
        #expect(try Chromium.pageRequests(inNetLog: netLog) == [], "the page made requests")
    }
}

extension ResultsPageBrowserTests {
    @Test func theBrowserShowsRenewedTookOfferAndRetentionChartsWithALineOrDotPerArmAndLookAndRunsNoScript() async throws {
        let chromium = try Chromium.require()
        let (root, fortnight) = try ResultsPageTests.simulation()
        defer { try? FileManager.default.removeItem(at: root) }
        let (report, timeline, html) = try ResultsPageTests.page(root, now: fortnight.adding(seconds: 40 * 86400))
        #expect(!html.contains("<script"))
        let folder = try temporaryFolder("results-page-over-time")
        defer { try? FileManager.default.removeItem(at: folder) }
        let page = folder.appendingPathComponent("results.html")
        try Data(html.utf8).write(to: page)
        let comparison = try #require(report.comparisons.first)
        let renewed = try #require(timeline.differences(comparison, of: .renewed)["upsell-yearly"])
        let took = try #require(timeline.rates(comparison, of: .tookOffer)["upsell-yearly"])
        let days = (report.rows.first?.retention?.count ?? 0) - 1
        let marked = [1, 7, 14, 30, 60, 90].filter { $0 <= days }.count
        for width in [390, 1200] {
            let measure = try await Self.measure(page, width: width, chromium: chromium)
            #expect(measure.overflow.isEmpty, "\(width) px: \(measure.overflow)")
            #expect(measure.resources.isEmpty)
            let counts = measure.counts
            #expect(counts["script"] == 1, "only the measuring script added to the copy: the page runs none of its own")
            #expect(counts["svg.retention path.survival"] == 2, "a line per arm")
            #expect(counts["svg.retention circle.survival-point"] == 2 * marked)
            #expect(counts["table.retention-table tbody tr"] == 2)
            #expect(counts["svg.difference[data-metric=\"renewed\"] circle.diff"] == renewed.filter { $0.difference.difference != nil && $0.bounds == nil }.count)
            #expect(counts["svg.difference[data-metric=\"renewed\"] line.diff-bounds"] == renewed.filter { $0.bounds != nil }.count)
            #expect(counts["svg.took-offer circle.rate-look"] == took.filter { !$0.rate.early && $0.rate.rate != nil }.count)
            #expect(counts["svg.took-offer line.rate-bounds"] == took.filter { $0.rate.early && $0.rate.bounds != nil }.count)
            let dayOne = try #require(report.rows.first?.retention?[1])
            #expect(measure.text.contains(ResultsReport.describe(dayOne)), "\(width) px: the retention table is shown")
        }
    }
}

/// The manual's picture of the page is made by the same code from the same simulation, never by
/// hand. Pixels differ between machines, so the digest of the page it was taken of is recorded beside
/// it; a change to the page fails here until `UPDATE_GOLDEN=1` takes the picture again.
@Suite("The manual's screenshot of the results page")
struct ResultsPageScreenshotTests {
    static let folder = "docs/images/results"

    @Test func theManualsScreenshotWasTakenOfTheResultsPageTheCodeDrawsToday() async throws {
        let (root, now) = try ResultsPageTests.simulation()
        defer { try? FileManager.default.removeItem(at: root) }
        let html = try ResultsPageTests.page(root, now: now).2
        let expected = "\(Digest.sha256Hex([UInt8](html.utf8)))  results.png\n"
        if Golden.isRecording {
            let chromium = try Chromium.require()
            let page = try temporaryFolder("results-shot").appendingPathComponent("results.html")
            try Data(html.utf8).write(to: page)
            try FileManager.default.createDirectory(at: Repository.url(Self.folder), withIntermediateDirectories: true)
            try await chromium.screenshot(page, to: Repository.url("\(Self.folder)/results.png"), width: 1200, height: 1500)
        }
        Golden.expect(expected, matches: "\(Self.folder)/screenshots.sha256")
        let png = try? Data(contentsOf: Repository.url("\(Self.folder)/results.png"))
        #expect(png?.starts(with: [0x89, 0x50, 0x4E, 0x47]) == true, "\(Self.folder)/results.png is missing: UPDATE_GOLDEN=1 takes it")
    }
}

/// Reading an SVG the tool drew, with no XML library: its elements' attributes by regular expression.
enum SVG {
    static func all(in html: String, class name: String) -> [String] {
        html.components(separatedBy: "<svg class=\"\(name)\"").dropFirst().map { $0.components(separatedBy: "</svg>")[0] }
    }

    struct Element {
        var attributes: [String: String]
        var text: String
        subscript(_ name: String) -> String? { attributes[name] }
        func double(_ name: String) -> Double { Double(attributes[name] ?? "") ?? .nan }
    }

    static func elements(_ svg: String, _ tag: String, class name: String) -> [Element] {
        let pattern = try! NSRegularExpression(pattern: "<\(tag) class=\"\(name)\"([^>]*?)/?>(?:([^<]*))?")
        let attribute = try! NSRegularExpression(pattern: "([a-zA-Z][a-zA-Z0-9-]*)=\"([^\"]*)\"")
        let text = svg as NSString
        return pattern.matches(in: svg, range: NSRange(location: 0, length: text.length)).map { match in
            let body = text.substring(with: match.range(at: 1))
            var attributes: [String: String] = [:]
            for found in attribute.matches(in: body, range: NSRange(location: 0, length: (body as NSString).length)) {
                attributes[(body as NSString).substring(with: found.range(at: 1))] = unescape((body as NSString).substring(with: found.range(at: 2)))
            }
            let inner = match.range(at: 2).location == NSNotFound ? "" : text.substring(with: match.range(at: 2))
            return Element(attributes: attributes, text: inner)
        }
    }

    static func unescape(_ text: String) -> String {
        text.replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">")
            .replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&#39;", with: "'").replacingOccurrences(of: "&amp;", with: "&")
    }

    /// `35%` → 0.35.
    static func percent(_ label: String) -> Double? {
        label.hasSuffix("%") ? Double(label.dropLast()).map { $0 / 100 } : nil
    }

    /// `+5`, `0`, `−10` (points) → 0.05, 0, −0.1.
    static func points(_ label: String) -> Double? {
        let sign = label.hasPrefix("−") ? -1.0 : 1.0
        return Double(label.trimmingCharacters(in: CharacterSet(charactersIn: "+−"))).map { sign * $0 / 100 }
    }

    /// The value at a coordinate, from the chart's first and last tick as a person reads them: the
    /// position of each tick's line and the number its label prints.
    static func axis(_ svg: String, vertical: Bool, label: (String) -> Double?) throws -> (Double) -> Double {
        let pattern = try NSRegularExpression(pattern: "<g class=\"tick\"[^>]*><line x1=\"([^\"]+)\" y1=\"([^\"]+)\"[^>]*/><text[^>]*>([^<]+)</text></g>")
        let text = svg as NSString
        let ticks: [(position: Double, value: Double)] = pattern.matches(in: svg, range: NSRange(location: 0, length: text.length)).compactMap { match in
            guard let position = Double(text.substring(with: match.range(at: vertical ? 2 : 1))),
                  let value = label(text.substring(with: match.range(at: 3))) else { return nil }
            return (position, value)
        }
        guard let first = ticks.first, let last = ticks.last, ticks.count >= 2, first.position != last.position else {
            throw PageFailure(description: "the chart has fewer than two readable ticks")
        }
        return { coordinate in first.value + (coordinate - first.position) / (last.position - first.position) * (last.value - first.value) }
    }
}

struct PageFailure: Error, CustomStringConvertible {
    var description: String
}
