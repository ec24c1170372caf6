import EventContract

/// What the report's rows were day by day: per row (flow, rule, period) and UTC day, the customers
/// first exposed that day and the kept-at-24-h outcomes decided that day. Summed up to the end of a day
/// they are the counts a report with `now` at that instant would give, so the difference from the
/// control can be drawn over time without reading the events once per day.
public struct ResultsTimeline: Sendable, Equatable {
    public struct Day: Sendable, Equatable {
        /// The day's start, UTC midnight, in milliseconds.
        public var start: Int64
        public var exposed: Int
        public var kept: Int
        public var notKept: Int
    }

    public struct Arm: Sendable, Equatable {
        public var flow: String
        public var rule: String
        public var splitLayout: String?
        /// Days with any count, oldest first.
        public var days: [Day]
    }

    /// The report's `now`, in milliseconds.
    public var now: Int64
    public var arms: [Arm]

    /// No days: the page then draws the rates and revenue, and no series.
    public static let empty = ResultsTimeline(now: 0, arms: [])

    init(now: Int64, arms: [Arm]) {
        self.now = now
        self.arms = arms
    }

    init(_ join: ResultsJoin, now: Int64) {
        self.now = now
        arms = join.days.keys.sorted().map { key in
            let byDay = join.days[key] ?? [:]
            return Arm(flow: join.string(key.flow) ?? "", rule: join.string(key.rule) ?? "",
                       splitLayout: key.layout == Interner.null ? nil : join.string(key.layout),
                       days: byDay.keys.sorted().map { start in
                           let counts = byDay[start] ?? ResultsJoin.DayCounts()
                           return Day(start: start, exposed: counts.exposed, kept: counts.kept, notKept: counts.notKept)
                       })
        }
    }

    /// One look at a comparison: the difference of an arm from the control as a report at `time` would say it.
    public struct Point: Sendable, Equatable {
        /// The instant of the look (ms): the last millisecond of a UTC day, or the report's `now` for the last look.
        public var time: Int64
        /// The UTC day the look closes (`2026-10-04`).
        public var day: String
        /// Customers with a decided kept-at-24-h outcome in the arm and the control.
        public var armDecided: Int
        public var controlDecided: Int
        public var difference: ResultsReport.Difference
    }

    /// The arm's row in one period of a split group, or nil.
    public func arm(flow: String, rule: String, splitLayout: String?) -> Arm? {
        arms.first { $0.flow == flow && $0.rule == rule && $0.splitLayout == splitLayout }
    }

    /// Every day's end from the period's first exposure to the last full day before `now`, then `now`
    /// itself: per compared arm, its kept-at-24-h difference from the control at that look. The last
    /// look is the report's own comparison, number for number.
    public func kept24hDifferences(_ comparison: ResultsReport.SplitComparison) -> [String: [Point]] {
        guard let control = comparison.control,
              let controlArm = arm(flow: comparison.flow, rule: control, splitLayout: comparison.splitLayout) else { return [:] }
        let compared = comparison.arms.compactMap { arm(flow: comparison.flow, rule: $0.rule, splitLayout: comparison.splitLayout) }
        let starts = ([controlArm] + compared).flatMap { $0.days.map(\.start) }
        var series: [String: [Point]] = [:]
        if let first = starts.min() {
            var dayStart = first
            while dayStart + EventTime.day - 1 < now {
                let end = dayStart + EventTime.day - 1
                let controlRate = Self.rate(controlArm, through: dayStart)
                // As `compare` does at that look: the arms with customers share the error rate.
                let present = compared.filter { Self.exposed($0, through: dayStart) > 0 }
                if controlRate.exposed > 0 {
                    let alpha = DifferenceConfidenceSequence.defaultAlpha / Double(max(1, present.count))
                    for arm in present {
                        let armRate = Self.rate(arm, through: dayStart)
                        series[arm.rule, default: []].append(
                            Point(time: end, day: Self.dayText(dayStart), armDecided: armRate.rate.successes + armRate.rate.failures,
                                  controlDecided: controlRate.rate.successes + controlRate.rate.failures,
                                  difference: ResultsReport.difference(armRate.rate, controlRate.rate, alpha: alpha)))
                    }
                }
                dayStart += EventTime.day
            }
        }
        let controlDecided = Self.rate(controlArm, through: .max).rate
        for armComparison in comparison.arms {
            guard let arm = compared.first(where: { $0.rule == armComparison.rule }) else { continue }
            let decided = Self.rate(arm, through: .max).rate
            series[arm.rule, default: []].append(
                Point(time: now, day: Self.dayText(ResultsJoin.dayStart(now)), armDecided: decided.successes + decided.failures,
                      controlDecided: controlDecided.successes + controlDecided.failures, difference: armComparison.kept24h))
        }
        return series
    }

    static func exposed(_ arm: Arm, through dayStart: Int64) -> Int {
        arm.days.reduce(0) { $0 + ($1.start <= dayStart ? $1.exposed : 0) }
    }

    static func rate(_ arm: Arm, through dayStart: Int64) -> (exposed: Int, rate: ResultsReport.Rate) {
        var exposed = 0, kept = 0, notKept = 0
        for day in arm.days where day.start <= dayStart {
            exposed += day.exposed
            kept += day.kept
            notKept += day.notKept
        }
        return (exposed, ResultsReport.Rate(successes: kept, failures: notKept, pending: exposed - kept - notKept))
    }

    /// `2026-10-04`.
    public static func dayText(_ millis: Int64) -> String {
        String(EventTime.format(millis).prefix(10))
    }

    /// The start of the UTC day holding `millis`: the days the timeline counts in.
    public static func dayStart(_ millis: Int64) -> Int64 {
        ResultsJoin.dayStart(millis)
    }
}
