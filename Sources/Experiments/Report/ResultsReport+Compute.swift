public import Basics
import EventContract
public import Foundation

/// A line of a segment that is not an event of the contract: where it is and why.
public struct EventReadError: Error, CustomStringConvertible {
    public var location: String
    public var line: Int
    public var reason: String

    public var description: String {
        "\(location):\(line): error: \(reason); segments are immutable NDJSON of the event contract — move the segment aside to read the rest"
    }
}

extension ResultsReport {
    /// Reads `environment`'s decisions and outcomes from `source` in one streaming pass and reports
    /// every rule (of `flow`, or of all flows) exposed between `since` and `now`, as things stand at `now`.
    ///
    /// `configuration` (the rules as configured now) turns on the checks that compare the data with it
    /// (sample ratio, arms without exposures, rules not configured); `clock` is the time of the run,
    /// which outcomes must not be dated after (default: `now`; `results --as-of` passes the real time).
    ///
    /// Segments are read and parsed on `readers` threads ahead of the join (0: on the calling thread,
    /// one after another); the join takes them in the same order either way, so the report is the same.
    public static func compute(source: any EventSource, environment: String, flow: String? = nil, since: UTCTime? = nil,
                               now: UTCTime, breakdown: ResultsBreakdown? = nil, configuration: ResultsConfiguration? = nil,
                               clock: UTCTime? = nil, paidHorizonDays: Int = defaultPaidHorizonDays,
                               readers: Int = defaultReaders) throws -> ResultsReport {
        try run(source: source, environment: environment, flow: flow, since: since, now: now, breakdown: breakdown,
                configuration: configuration, clock: clock, paidHorizonDays: paidHorizonDays, daily: false, readers: readers).report
    }

    /// One reading thread per processor, at most four: parsing is most of the work, and the one join
    /// beside them bounds what more readers could add (on two cores, one reader gives nearly all of it).
    public static var defaultReaders: Int { min(4, ProcessInfo.processInfo.activeProcessorCount) }

    /// Payments count within 35 days of the exposure by default: one monthly renewal and the days of
    /// billing retry after it. A yearly product needs a horizon past its renewal (`--paid-horizon`).
    public static let defaultPaidHorizonDays = Int(ResultsJoin.defaultPaidHorizon / EventTime.day)
    public static let paidHorizonDaysRange = 1 ... 400

    /// `compute`, and the per-day counts the HTML view draws over time (`ResultsTimeline`), from the
    /// same single pass: each exposure adds to the counts of its day as its window closes, and each
    /// outcome that decides (or changes) a customer's renewed or took offer to the counts of its own
    /// day, so the series costs a dictionary update per customer and per deciding outcome, and no
    /// second reading of the events.
    public static func computeWithTimeline(source: any EventSource, environment: String, flow: String? = nil, since: UTCTime? = nil,
                                           now: UTCTime, breakdown: ResultsBreakdown? = nil, configuration: ResultsConfiguration? = nil,
                                           clock: UTCTime? = nil, paidHorizonDays: Int = defaultPaidHorizonDays,
                                           readers: Int = defaultReaders) throws -> (report: ResultsReport, timeline: ResultsTimeline) {
        let (report, timeline) = try run(source: source, environment: environment, flow: flow, since: since, now: now, breakdown: breakdown,
                                         configuration: configuration, clock: clock, paidHorizonDays: paidHorizonDays, daily: true,
                                         readers: readers)
        return (report, timeline ?? ResultsTimeline(now: 0, arms: []))
    }

    private static func run(source: any EventSource, environment: String, flow: String?, since: UTCTime?, now: UTCTime,
                            breakdown: ResultsBreakdown?, configuration: ResultsConfiguration?, clock: UTCTime?,
                            paidHorizonDays: Int, daily: Bool, readers: Int) throws -> (report: ResultsReport, timeline: ResultsTimeline?) {
        let nowMillis = now.milliseconds
        let sinceMillis = since?.milliseconds ?? Int64.min
        let clockMillis = clock?.milliseconds ?? nowMillis
        var join = ResultsJoin(now: nowMillis, since: sinceMillis, flow: flow, breakdown: breakdown,
                               futureLimit: clockMillis + Checks.clockTolerance, daily: daily,
                               paidHorizon: Int64(paidHorizonDays) * EventTime.day)

        var partitions: [EventPartition: Set<EventStream>] = [:]
        for stream in EventStream.allCases {
            for partition in try source.partitions(of: stream, environment: environment) {
                partitions[partition, default: []].insert(stream)
            }
        }
        // What to read, in the order the join takes it; each partition releases what its hour closed.
        var work: [SegmentWork] = []
        var releases: [(after: Int, before: Int64)] = []
        for partition in partitions.keys.sorted() {
            // A partition holds events of its hour, or up to the lateness bound before it.
            if partition.start - ResultsJoin.lateness > nowMillis, partition.start + EventTime.hour > join.futureLimit,
               partitions[partition]?.contains(.outcomes) == true {
                // Later than the window, and later than the clock: read only to count outcomes from the future.
                for segment in try source.segments(of: .outcomes, environment: environment, in: partition) {
                    work.append(SegmentWork(segment: segment, isOutcome: true, inspectOnly: true))
                }
                continue
            }
            guard partition.start + EventTime.hour > sinceMillis,
                  partition.start - ResultsJoin.lateness <= nowMillis else { continue }
            for stream in EventStream.allCases where partitions[partition]?.contains(stream) == true {
                for segment in try source.segments(of: stream, environment: environment, in: partition) {
                    work.append(SegmentWork(segment: segment, isOutcome: stream == .outcomes, inspectOnly: false))
                }
            }
            releases.append((work.count, partition.start + EventTime.hour - ResultsJoin.lateness))
        }
        try feed(work, releases: releases, from: source, into: &join, readers: readers)
        join.finish()
        let report = assemble(join, environment: environment, flow: flow, since: since.map { _ in EventTime.format(sinceMillis) },
                              now: EventTime.format(nowMillis), breakdown: breakdown, configuration: configuration,
                              window: (sinceMillis, nowMillis), clock: clockMillis)
        return (report, daily ? ResultsTimeline(join, now: nowMillis) : nil)
    }

    /// Feeds every segment of `work` to the join in order, releasing each partition's hour after
    /// its last segment.
    private static func feed(_ work: [SegmentWork], releases: [(after: Int, before: Int64)], from source: any EventSource,
                             into join: inout ResultsJoin, readers: Int) throws {
        var release = releases.makeIterator()
        var pending = release.next()
        func releaseDone(through index: Int) {
            while let due = pending, due.after <= index {
                join.release(before: due.before)
                pending = release.next()
            }
        }
        releaseDone(through: 0)
        guard readers > 0 else {
            for (index, item) in work.enumerated() {
                try read(item, from: source, into: &join)
                releaseDone(through: index + 1)
            }
            return
        }
        let ahead = SegmentReadAhead(work, from: source, readers: readers, window: 4 * readers)
        ahead.start()
        defer { ahead.stop() }
        for (index, item) in work.enumerated() {
            var parsed = ahead.take(index)
            if let failure = parsed.failure { throw failure }
            if !item.inspectOnly { join.countSegment() }
            for event in parsed.events(renumberedFor: &join.parser.interner) {
                if item.inspectOnly { join.inspectFuture(event) } else { join.ingest(event) }
            }
            releaseDone(through: index + 1)
        }
    }

    /// Reads one segment on this thread, with the join's own parser.
    private static func read(_ item: SegmentWork, from source: any EventSource, into join: inout ResultsJoin) throws {
        if !item.inspectOnly { join.countSegment() }
        try SegmentLines.read(item.segment, from: source) { line, number in
            do throws(EventLineParser.Refusal) {
                if let event = try join.parser.parse(line, isOutcome: item.isOutcome) {
                    if item.inspectOnly { join.inspectFuture(event) } else { join.ingest(event) }
                }
            } catch {
                throw EventReadError(location: item.segment.location, line: number, reason: error.reason)
            }
        }
    }

    /// The report, stage by stage: the rows, the warnings the events raise, the checks against the
    /// configuration, the comparisons.
    private static func assemble(_ join: ResultsJoin, environment: String, flow: String?, since: String?, now: String,
                                 breakdown: ResultsBreakdown?, configuration: ResultsConfiguration?,
                                 window: (since: Int64, now: Int64), clock: Int64) -> ResultsReport {
        let rowMaker = RowMaker(join: join, unknownValue: breakdown?.isCustomerFact == true ? "unknown" : "(none)")
        let rows = rowMaker.rows()
        var breakdownRows = breakdown == nil ? nil : rowMaker.breakdownRows()
        if breakdown == .message, let names = configuration?.messageNames, !names.isEmpty {
            breakdownRows = breakdownRows?.map { row in
                var named = row
                named.valueName = row.value.flatMap { names[$0] }
                return named
            }
        }
        let keys = KeyUse(join)
        var warnings = eventWarnings(join, keys: keys)
        if join.counts.segments == 0 {
            warnings.append("no event segments were read for \(environment) in this window: nothing was recorded where results looked "
                            + "(serve and outcomes pull write to events/v1 beside the environment's state, or where their --events points) — "
                            + "this is no traffic seen, not 0 customers kept")
        }
        let otherCurrency = rows.reduce(0) { $0 + $1.paid.otherCurrencyPayments }
        let fallbacks = join.counts.shed + join.counts.notReady + join.counts.failed
        if fallbacks > 0 {
            warnings.append("\(count(fallbacks)) realtime request\(fallbacks == 1 ? " was" : "s were") answered {} because serve could not decide "
                            + "(shed under load \(count(join.counts.shed)), not ready \(count(join.counts.notReady)), error \(count(join.counts.failed))): "
                            + "those customers saw App Store Connect's retention message or the default message, in no arm")
        }
        if otherCurrency > 0 {
            warnings.append("\(count(otherCurrency)) payment\(otherCurrency == 1 ? " was" : "s were") made in a second currency by a customer "
                            + "within the paid horizon (their storefront changed) and not counted in `paid`: each customer's money is counted "
                            + "in the currency of their first payment")
        }
        let configured = configuration.map { configuration in
            configuration.rules.filter { rule in flow == nil || rule.flow == flow }
        }
        var checks = Checks(configuration: configuration?.source, armsWithoutExposures: [], rulesNotConfigured: [],
                            clock: EventTime.format(clock), clockToleranceSeconds: Int(Checks.clockTolerance / 1000),
                            outcomesAfterClock: join.futureOutcomes.count, outcomesBeforeFirstDecision: [], outcomeKeysWithoutDecisions: [])
        checkKeys(join, keys: keys, window: window, into: &checks)
        if let configured { checkConfigured(configured, rows: rows, window: window, into: &checks) }
        checks.warnings(into: &warnings)
        var comparisons = compare(rows, configured: configured, warnings: &warnings)
        adjust(&comparisons, facts: FactTables(join))
        comparisons = checkGuardrails(comparisons, by: configuration?.guardrails ?? [], warnings: &warnings)
        let segments = breakdownRows.map { segmentComparisons($0, breakdown: breakdown) }
        var method = method(paidHorizonDays: Int(join.paidHorizon / EventTime.day))
        if let segments {
            method.segmentAdjustment = segmentAdjustment(confirmatory: segments.confirmatory, exploratory: segments.exploratory)
        }
        let pooled = pooled(comparisons, rows: rows)
        if !pooled.isEmpty { method.pooledDifferenceInterval = pooledMethod }
        let counts = join.counts
        return ResultsReport(
            formatVersion: formatVersion, environment: environment, flow: flow, since: since, now: now,
            method: method, rows: rows, breakdown: breakdown, breakdownRows: breakdownRows,
            segmentComparisons: segments?.comparisons, comparisons: comparisons, pooled: pooled.isEmpty ? nil : pooled,
            events: EventCounts(decisions: counts.decisions, outcomes: counts.outcomes, duplicates: counts.duplicates,
                                late: counts.late, invalid: counts.invalid, outsideWindow: counts.outsideWindow,
                                segments: counts.segments, keyIds: keys.keyIds,
                                fallbacks: Fallbacks(shed: counts.shed, notReady: counts.notReady, error: counts.failed)),
            checks: checks, warnings: warnings)
    }

    /// How the segment comparisons are adjusted: Holm within each family, the confirmatory apart from the exploratory.
    static func segmentAdjustment(confirmatory: Int, exploratory: Int) -> String {
        func comparisons(_ count: Int) -> String { "\(count) comparison\(count == 1 ? "" : "s")" }
        return "Holm's step-down procedure at 5% (always-valid p-values) for each metric, in two families adjusted apart: the "
            + "\(comparisons(confirmatory)) confirmatory (segments of periods whose layout declares the breakdown: declared in the "
            + "manifest, segments:, before their decisions were made) and the \(comparisons(exploratory)) exploratory (every other); "
            + "each interval at the level its comparison was tested at"
    }

    /// How the numbers are made, as every report states it.
    private static func method(paidHorizonDays: Int) -> Method {
        Method(
            rateInterval: "Wilson score interval, 95%",
            differenceInterval: "always-valid confidence sequence: normal-mixture sequential probability ratio test (Johari, Koomen, Pekelis & Walsh 2022; Howard, Ramdas, McAuliffe & Sekhon 2021), valid at every look",
            mixingStandardDeviation: DifferenceConfidenceSequence.mixingStandardDeviation, confidence: 0.95,
            keptWindowHours: Int(ResultsJoin.keptWindow / EventTime.hour),
            renewalGraceDays: Int(ResultsJoin.renewalGrace / EventTime.day),
            unknownExpiryCapDays: Int(ResultsJoin.unknownExpiryCap / EventTime.day),
            latenessHours: Int(ResultsJoin.lateness / EventTime.hour),
            paidHorizonDays: paidHorizonDays, paymentLagDays: Int(ResultsJoin.paymentLag / EventTime.day),
            paidInterval: "normal approximation, 95%, on the mean paid per decided customer",
            paidDifferenceInterval: "always-valid confidence sequence on the difference of means: the same normal mixture, its "
                + "standard deviation 0.1 of the customers' pooled standard deviation, valid at every look",
            adjustedDifferenceInterval: adjustedMethod, retentionCurve: retentionMethod)
    }

    /// What `retention` on each row is, as every report states it.
    static let retentionMethod = "Kaplan–Meier share of the row's exposed customers still subscribed by whole days since their first "
        + "exposure, pointwise 95% interval from Greenwood's variance on the complementary log-log scale; a customer is no longer "
        + "subscribed from a REFUND or REVOKE, an EXPIRED (at the end of the period it names), or the end of a period not renewed "
        + "within the \(ResultsJoin.renewalGrace / EventTime.day)-day grace period; a customer still subscribed at `now` is censored "
        + "there (at the expiry, while a renewal may still come within the grace period), not counted as lost"

    /// The rows of the joined tallies, each arm with the period its layout began.
    private struct RowMaker {
        let join: ResultsJoin
        /// A period starts at the first exposure of any arm under its layout.
        let periodStart: [String: Int64]
        /// How a breakdown row without a value is named: "unknown" for a customer fact nobody signed.
        let unknownValue: String

        init(join: ResultsJoin, unknownValue: String) {
            self.join = join
            self.unknownValue = unknownValue
            var periodStart: [String: Int64] = [:]
            for (key, info) in join.armInfo where key.layout != Interner.null {
                let period = "\(key.flow)\u{0}\(info.splitGroup)\u{0}\(key.layout)"
                periodStart[period] = min(periodStart[period] ?? .max, info.firstExposure)
            }
            self.periodStart = periodStart
        }

        func rows() -> [Row] {
            join.tallies.map { row($0.key, $0.value, value: nil) }.sorted {
                ($0.flow, $0.rule, $0.periodSince ?? "", $0.splitLayout ?? "") < ($1.flow, $1.rule, $1.periodSince ?? "", $1.splitLayout ?? "")
            }
        }

        func breakdownRows() -> [Row] {
            join.breakdownTallies.flatMap { key, byValue in
                byValue.map { row(key, $0.value, value: name($0.key) ?? unknownValue) }
            }
            .sorted { ($0.flow, $0.rule, $0.periodSince ?? "", $0.splitLayout ?? "", $0.value ?? "")
                < ($1.flow, $1.rule, $1.periodSince ?? "", $1.splitLayout ?? "", $1.value ?? "") }
        }

        private func name(_ id: Int32) -> String? { join.string(id) }

        private func money(_ amounts: [Int32: Int64]) -> [String: Int64] {
            Dictionary(uniqueKeysWithValues: amounts.compactMap { key, value in name(key).map { ($0, value) } })
        }

        private func paid(_ tally: Tally) -> Paid {
            var currencies: [String: Amount] = [:]
            for (key, sums) in tally.paid {
                guard let currency = name(key) else { continue }
                let estimate = MeanEstimate(count: tally.paidDecided, total: Double(sums.total), squares: sums.squares)
                currencies[currency] = Amount(milliunits: sums.total, payments: sums.payments, perCustomer: rounded(estimate.mean),
                                              interval: estimate.interval.map { ProportionInterval(low: rounded($0.low), high: rounded($0.high)) },
                                              standardDeviation: rounded(estimate.variance.squareRoot()), longerThanHorizon: sums.longPayments)
            }
            return Paid(decided: tally.paidDecided, pending: tally.paidPending, currencies: currencies,
                        otherCurrencyPayments: tally.otherCurrencyPayments)
        }

        private func row(_ key: ArmKey, _ tally: Tally, value: String?) -> Row {
            let info = join.armInfo[key] ?? ArmInfo()
            let start = periodStart["\(key.flow)\u{0}\(info.splitGroup)\u{0}\(key.layout)"]
            var row = Row(flow: name(key.flow) ?? "", rule: name(key.rule) ?? "", splitGroup: name(info.splitGroup), arm: name(info.arm),
                       splitControl: info.splitControl,
                       answers: info.answers.sorted().compactMap { Answer(rawValue: $0)?.name },
                       value: value, exposed: tally.exposed,
                       kept24h: Rate(successes: tally.kept, failures: tally.notKept, pending: tally.keptPending),
                       tookOffer: tally.offered > 0
                           ? Rate(successes: tally.took, failures: tally.offered - tally.took - tally.tookPending, pending: tally.tookPending) : nil,
                       renewed: Rate(successes: tally.renewed, failures: tally.notRenewed, pending: tally.renewedPending),
                       discountGiven: money(tally.discountGiven), paid: paid(tally),
                       answeredLate: tally.answeredLate, tookAppStoreConnectOffer: tally.storeOffers)
            if value == nil {
                let counts = join.survival[key] ?? SurvivalCounts()
                row.retention = KaplanMeier.curve(lost: counts.lost, censored: counts.censored)
            }
            if key.layout != Interner.null {
                row.splitLayout = name(key.layout)
                row.periodSince = start.flatMap { $0 == .max ? nil : EventTime.format($0) }
            }
            return row
        }
    }

    /// The pseudonym keys the events carry, and which of them decisions and outcomes use.
    private struct KeyUse {
        var keyIds: [String]
        var outcomeOnlyKeys: Set<String>
        var decisionKeys: [String]

        init(_ join: ResultsJoin) {
            keyIds = join.keyIds.compactMap(join.string).sorted()
            outcomeOnlyKeys = Set(join.keyActivity.filter { $0.value.outcomes > 0 && $0.value.decisions == 0 }.keys.compactMap(join.string))
            decisionKeys = join.keyActivity.filter { $0.value.decisions > 0 }.keys.compactMap(join.string).sorted()
        }
    }

    /// What the events themselves warn of: a key rotation, events filed late, events without a time.
    private static func eventWarnings(_ join: ResultsJoin, keys: KeyUse) -> [String] {
        var warnings: [String] = []
        let keyIds = keys.keyIds
        if keyIds.filter({ !keys.outcomeOnlyKeys.contains($0) || keys.decisionKeys.isEmpty }).count > 1 {
            warnings.append("events carry \(keyIds.count) pseudonym keys (\(keyIds.joined(separator: ", "))): customers are joined only within one key, so a customer seen before and after a rotation counts twice")
        }
        let counts = join.counts
        if counts.late > 0 {
            warnings.append("\(counts.late) events lay in a partition more than \(ResultsJoin.lateness / EventTime.hour) h after their time and were left out; a writer is filing events by the wrong hour")
        }
        if counts.invalid > 0 {
            warnings.append("\(counts.invalid) events had no time or no eventId and were left out")
        }
        return warnings
    }

    /// Outcome keys no decision used, and keys whose outcomes all came before their first decision.
    private static func checkKeys(_ join: ResultsJoin, keys: KeyUse, window: (since: Int64, now: Int64), into checks: inout Checks) {
        guard !keys.decisionKeys.isEmpty else { return }
        for key in join.keyActivity.keys.sorted() {
            guard let activity = join.keyActivity[key], let keyId = join.string(key) else { continue }
            if activity.outcomes > 0, activity.decisions == 0 {
                checks.outcomeKeysWithoutDecisions.append(KeyCount(keyId: keyId, outcomes: activity.outcomes, decisionKeyIds: keys.decisionKeys))
            } else if activity.outcomes > 0, activity.decisions > 0, activity.lastOutcome < activity.firstDecision,
                      activity.firstDecision + EventTime.day <= window.now {
                checks.outcomesBeforeFirstDecision.append(KeyTimes(keyId: keyId, outcomes: activity.outcomes,
                                                                   firstDecision: EventTime.format(activity.firstDecision),
                                                                   lastOutcome: EventTime.format(activity.lastOutcome)))
            }
        }
    }

    /// Rules exposed but not configured, and configured split arms live in the window but never exposed.
    private static func checkConfigured(_ configured: [ResultsConfiguration.Rule], rows: [Row], window: (since: Int64, now: Int64),
                                        into checks: inout Checks) {
        let known = Set(configured.map { "\($0.flow)/\($0.rule)" })
        // An arm of a period that is over (its group has a later layout) may have been stopped on
        // purpose: only exposures outside a group, or in its latest period, ask for a configured rule.
        let latest = latestLayouts(rows)
        var notConfigured: [String: ExposedRule] = [:]
        for row in rows where !known.contains("\(row.flow)/\(row.rule)") {
            if let group = row.splitGroup, let layout = row.splitLayout, latest[groupKey(row.flow, group)] != layout { continue }
            notConfigured["\(row.flow)/\(row.rule)", default: ExposedRule(flow: row.flow, rule: row.rule, exposed: 0)].exposed += row.exposed
        }
        checks.rulesNotConfigured = notConfigured.keys.sorted().compactMap { notConfigured[$0] }
        let exposedRules = Set(rows.filter { $0.exposed > 0 }.map { "\($0.flow)/\($0.rule)" })
        guard !rows.isEmpty else { return }
        checks.armsWithoutExposures = configured.compactMap { rule in
            guard let group = rule.splitGroup, let percent = rule.percent, !exposedRules.contains("\(rule.flow)/\(rule.rule)"),
                  rule.notBefore.map({ $0 <= window.now }) ?? true, rule.notAfter.map({ $0 > window.since }) ?? true else { return nil }
            return ConfiguredArm(flow: rule.flow, splitGroup: group, rule: rule.rule, percent: percent)
        }
    }

    /// Every split group's arms against its control: the rule marked `splitControl`, else the arm that
    /// answered `none` (the natural holdout), else none.
    static func compare(_ rows: [Row], configured: [ResultsConfiguration.Rule]? = nil, warnings: inout [String]) -> [SplitComparison] {
        var groups: [String: [Row]] = [:]
        for row in rows {
            guard let group = row.splitGroup else { continue }
            // One comparison per period: a configuration of the group, in the order the periods began.
            groups["\(row.flow)\u{0}\(group)\u{0}\(row.periodSince ?? "")\u{0}\(row.splitLayout ?? "")", default: []].append(row)
        }
        let latest = latestLayouts(rows)
        return groups.keys.sorted().map { key in
            let arms = groups[key] ?? []
            let flow = arms[0].flow
            let group = arms[0].splitGroup ?? ""
            let layout = arms[0].splitLayout
            // A period's own layout says what its shares were; the manifests say only today's.
            let configuredHere: [ResultsConfiguration.Rule]? = layout.map { layout in
                SplitLayoutText.arms(layout).map { arm in
                    ResultsConfiguration.Rule(flow: flow, rule: arm.rule, splitGroup: group, percent: arm.percent)
                }
            } ?? configured
            let matchDifferently = armsMatchDifferently(flow: flow, group: group, layout: layout, latest: latest[groupKey(flow, group)],
                                                        configured: configured)
            let marked = arms.filter(\.splitControl)
            let holdouts = arms.filter { $0.answers == ["none"] }
            var control: Row?
            var kind: String?
            if let first = marked.first {
                control = first
                kind = "splitControl"
                if marked.count > 1 {
                    warnings.append("\(flow) split group \(group) marks \(marked.count) rules as control; compared with \(first.rule), the first by name")
                }
            } else if let first = holdouts.first {
                control = first
                kind = "holdout"
            }
            let sampleRatio = configuredHere.flatMap {
                sampleRatioCheck(flow: flow, group: group, arms: arms, configured: $0, armsMatchDifferently: matchDifferently)
            }
            fallbackWarnings(flow: flow, group: group, arms: arms, into: &warnings)
            var verdictWarning: String? = matchDifferently ? differentCustomersWarning : nil
            if let sampleRatio, sampleRatio.mismatch {
                let p = sampleRatio.pValue.map(Self.pValueText) ?? ""
                verdictWarning = "sample-ratio mismatch (\(p) < \(SampleRatioTest.threshold)): customers did not reach the arms in the configured "
                    + "shares, so these verdicts cannot be trusted until the cause is found"
                warnings.append("\(flow) split group \(group): sample-ratio mismatch — exposed \(Self.ratioText(sampleRatio)), \(p); "
                                + "something other than chance moves customers between arms: an arm not live (left out or held for App Review), "
                                + "an earlier rule or a different match catching one arm's customers, the split changed during the window, "
                                + "or events lost; the group's verdicts cannot be trusted until it is found")
            }
            guard let control else {
                return SplitComparison(flow: flow, splitGroup: group, control: nil, controlKind: nil, alpha: DifferenceConfidenceSequence.defaultAlpha, arms: [],
                                       note: "no control: mark one rule of the group with `split: {control: true}`, or add an arm that answers none as a holdout",
                                       sampleRatio: sampleRatio, verdictWarning: verdictWarning, splitLayout: layout, periodSince: arms[0].periodSince)
            }
            let others = arms.filter { $0.rule != control.rule }
            let alpha = DifferenceConfidenceSequence.defaultAlpha / Double(max(1, others.count))
            let compared = others.map { arm in
                ArmComparison(rule: arm.rule, arm: arm.arm,
                              kept24h: difference(arm.kept24h, control.kept24h, alpha: alpha),
                              renewed: difference(arm.renewed, control.renewed, alpha: alpha),
                              paidPerCustomer: paidDifference(arm.paid, control.paid, alpha: alpha))
            }
            var comparison = SplitComparison(flow: flow, splitGroup: group, control: control.rule, controlKind: kind, alpha: rounded(alpha),
                                   arms: compared, note: nil, sampleRatio: sampleRatio, verdictWarning: verdictWarning,
                                   splitLayout: layout, periodSince: arms[0].periodSince)
            recommend(&comparison)
            return comparison
        }
    }

    /// What a comparison of arms that match different customers says instead of a verdict.
    static let differentCustomersWarning = "the arms match different customers (their products, locales, window or customer "
        + "conditions differ), so a difference between them may come from whom they reach, not from what they answer; "
        + "give the arms the same match to compare them as a fair split"

    static func groupKey(_ flow: String, _ group: String) -> String { "\(flow)\u{0}\(group)" }

    /// Each group's latest layout (`flow\0group` → layout): the period that began last. Every other
    /// period of the group is over.
    static func latestLayouts(_ rows: [Row]) -> [String: String] {
        var latest: [String: (since: String, layout: String)] = [:]
        for row in rows {
            guard let group = row.splitGroup, let layout = row.splitLayout else { continue }
            let key = groupKey(row.flow, group), since = row.periodSince ?? ""
            if let known = latest[key], (known.since, known.layout) >= (since, layout) { continue }
            latest[key] = (since, layout)
        }
        return latest.mapValues(\.layout)
    }

    /// Whether a period's arms matched different customers: its layout says so (`;match=`) when it
    /// was recorded with that attribute. For the latest period the configuration may also say so
    /// (layouts recorded before the attribute existed); a period that is over is judged by its
    /// layout alone, since today's configuration need not be what it ran with. Without a layout, the
    /// configured arms of the group decide.
    static func armsMatchDifferently(flow: String, group: String, layout: String?, latest: String?,
                                     configured: [ResultsConfiguration.Rule]?) -> Bool {
        let configuredArms = (configured ?? []).filter { $0.flow == flow && $0.splitGroup == group }
        guard let layout else { return Set(configuredArms.filter { $0.percent != nil }.map(\.audience)).count > 1 }
        if SplitLayoutText.armsMatchDifferently(layout) { return true }
        guard layout == latest else { return false }
        let audiences = SplitLayoutText.arms(layout).compactMap { arm in configuredArms.first { $0.rule == arm.rule }?.audience }
        return Set(audiences).count > 1
    }

    static func difference(_ arm: Rate, _ control: Rate, alpha: Double) -> Difference {
        let treatment = DifferenceConfidenceSequence.Arm(successes: arm.successes, trials: arm.successes + arm.failures)
        let base = DifferenceConfidenceSequence.Arm(successes: control.successes, trials: control.successes + control.failures)
        guard let interval = DifferenceConfidenceSequence.interval(treatment: treatment, control: base, alpha: alpha) else {
            return Difference(difference: nil, interval: nil, verdict: .noData, customersPerArmNeeded: nil, moreCustomersPerArm: nil,
                              estimateWithheld: nil)
        }
        let treatmentRate = Double(treatment.successes) / Double(treatment.trials)
        let controlRate = Double(base.successes) / Double(base.trials)
        let verdict = Verdict(difference: interval)
        var needed: Int?
        var more: Int?
        var withheld: String?
        if verdict == .notDistinguishableYet {
            withheld = SampleSizeEstimate.withheld(arm: (decided: treatment.trials, pending: arm.pending),
                                                   control: (decided: base.trials, pending: control.pending))
            if withheld == nil,
               let estimate = SampleSizeEstimate.customersPerArm(treatmentRate: treatmentRate, controlRate: controlRate, alpha: alpha) {
                needed = estimate
                more = max(1, estimate - min(treatment.trials, base.trials))
            }
        }
        return Difference(difference: rounded(treatmentRate - controlRate),
                          interval: ProportionInterval(low: rounded(interval.low), high: rounded(interval.high)),
                          verdict: verdict, customersPerArmNeeded: needed, moreCustomersPerArm: more, estimateWithheld: withheld,
                          relative: controlRate > 0 ? rounded((treatmentRate - controlRate) / controlRate) : nil)
    }

    /// The report as JSON: sorted keys, two-space indentation, a final newline.
    public func jsonData() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes, .prettyPrinted]
        var data = try encoder.encode(self)
        data.append(0x0A)
        return data
    }
}
