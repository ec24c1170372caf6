import EventContract

/// What the report's rows were day by day: per row (flow, rule, period) and UTC day, the customers
/// first exposed that day and the outcomes decided that day — kept at 24 h, renewed, took offer. Summed
/// up to the end of a day they are the counts a report with `now` at that instant would give, so each
/// arm's rates and its difference from the control can be drawn over time without reading the events
/// once per day.
public struct ResultsTimeline: Sendable, Equatable {
    /// One day's counts. Renewed and took offer are changes: a customer decided "not renewed" by an
    /// EXPIRED who renews within the grace period later moves (−1 on one side, +1 on the other).
    public struct Day: Sendable, Equatable {
        /// The day's start, UTC midnight, in milliseconds.
        public var start: Int64
        public var exposed: Int
        public var kept: Int
        public var notKept: Int
        public var renewed: Int = 0
        public var notRenewed: Int = 0
        /// Customers first exposed that day to an answer with something to take (an offer or a product).
        public var offered: Int = 0
        public var took: Int = 0
        public var notTook: Int = 0
    }

    /// The outcomes drawn over time.
    public enum Metric: String, Sendable, CaseIterable {
        case kept24h, renewed, tookOffer
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
                           let c = byDay[start] ?? ResultsJoin.DayCounts()
                           return Day(start: start, exposed: c.exposed, kept: c.kept, notKept: c.notKept, renewed: c.renewed,
                                      notRenewed: c.notRenewed, offered: c.offered, took: c.took, notTook: c.notTook)
                       })
        }
    }

    /// One look at a comparison: the difference of an arm from the control as a report at `time` would say it.
    public struct Point: Sendable, Equatable {
        /// The instant of the look (ms): the last millisecond of a UTC day, or the report's `now` for the last look.
        public var time: Int64
        /// The UTC day the look closes (`2026-10-04`).
        public var day: String
        /// Customers with a decided outcome in the arm and the control.
        public var armDecided: Int
        public var controlDecided: Int
        public var difference: ResultsReport.Difference
        /// The arm's and the control's rates at the look, as that report's rows would show them.
        public var armRate: ResultsReport.Rate
        public var controlRate: ResultsReport.Rate
        /// While either rate is `early` (fewer decided than pending): where the difference of these
        /// customers will end up, for certain — each rate's bounds over its exposed, the arm's lowest
        /// less the control's highest to the arm's highest less the control's lowest. The views show
        /// it instead of the difference's interval, which is no estimate yet. Nil once neither is early.
        public var bounds: ProportionInterval?
    }

    /// One look at an arm's rate, as a report at `time` would show it.
    public struct RatePoint: Sendable, Equatable {
        public var time: Int64
        public var day: String
        public var rate: ResultsReport.Rate
    }

    /// The arm's row in one period of a split group, or nil.
    public func arm(flow: String, rule: String, splitLayout: String?) -> Arm? {
        arms.first { $0.flow == flow && $0.rule == rule && $0.splitLayout == splitLayout }
    }

    /// The instants a comparison is looked at: the end of every UTC day from the period's first
    /// exposure to the last full day before `now` (each with its day's start), then `now` itself.
    func looks(of arms: [Arm]) -> [(time: Int64, dayStart: Int64)] {
        var looks: [(time: Int64, dayStart: Int64)] = []
        if var dayStart = arms.flatMap({ $0.days.map(\.start) }).min() {
            while dayStart + EventTime.day - 1 < now {
                looks.append((dayStart + EventTime.day - 1, dayStart))
                dayStart += EventTime.day
            }
        }
        looks.append((now, .max))
        return looks
    }

    /// `differences(comparison, of: .kept24h)`.
    public func kept24hDifferences(_ comparison: ResultsReport.SplitComparison) -> [String: [Point]] {
        differences(comparison, of: .kept24h)
    }

    /// Every look (see `looks`): per compared arm, its difference from the control in kept at 24 h or
    /// renewed at that look. The last look is the report's own comparison, number for number.
    /// (Took offer has no difference: a control rarely offers anything; see `rates`.)
    public func differences(_ comparison: ResultsReport.SplitComparison, of metric: Metric) -> [String: [Point]] {
        guard metric != .tookOffer, let control = comparison.control,
              let controlArm = arm(flow: comparison.flow, rule: control, splitLayout: comparison.splitLayout) else { return [:] }
        let compared = comparison.arms.compactMap { arm(flow: comparison.flow, rule: $0.rule, splitLayout: comparison.splitLayout) }
        var series: [String: [Point]] = [:]
        for look in looks(of: [controlArm] + compared) {
            let controlRate = Self.rate(controlArm, metric, through: look.dayStart)
            if look.time == now {
                for armComparison in comparison.arms {
                    guard let arm = compared.first(where: { $0.rule == armComparison.rule }) else { continue }
                    let armRate = Self.rate(arm, metric, through: .max)
                    series[arm.rule, default: []].append(
                        Self.point(look.time, armRate.rate, controlRate.rate,
                                   metric == .kept24h ? armComparison.kept24h : armComparison.renewed))
                }
                continue
            }
            // As `compare` does at that look: the arms with customers share the error rate.
            let present = compared.filter { Self.exposed($0, through: look.dayStart) > 0 }
            guard controlRate.exposed > 0 else { continue }
            let alpha = DifferenceConfidenceSequence.defaultAlpha / Double(max(1, present.count))
            for arm in present {
                let armRate = Self.rate(arm, metric, through: look.dayStart).rate
                series[arm.rule, default: []].append(
                    Self.point(look.time, armRate, controlRate.rate, ResultsReport.difference(armRate, controlRate.rate, alpha: alpha)))
            }
        }
        return series
    }

    /// Every look (see `looks`) at each arm of the comparison's period (the control included) whose
    /// answer had something to take: its took-offer rate as that report's row would show it. The last
    /// look is the report's own row.
    public func rates(_ comparison: ResultsReport.SplitComparison, of metric: Metric) -> [String: [RatePoint]] {
        let rules = (comparison.control.map { [$0] } ?? []) + comparison.arms.map(\.rule)
        let arms = rules.compactMap { arm(flow: comparison.flow, rule: $0, splitLayout: comparison.splitLayout) }
            .filter { metric != .tookOffer || $0.days.contains { $0.offered > 0 } }
        var series: [String: [RatePoint]] = [:]
        for look in looks(of: arms) {
            for arm in arms {
                let rate = Self.rate(arm, metric, through: look.dayStart)
                guard rate.exposed > 0 else { continue }
                series[arm.rule, default: []].append(RatePoint(time: look.time, day: Self.dayText(ResultsJoin.dayStart(look.time)), rate: rate.rate))
            }
        }
        return series
    }

    static func point(_ time: Int64, _ arm: ResultsReport.Rate, _ control: ResultsReport.Rate, _ difference: ResultsReport.Difference) -> Point {
        var bounds: ProportionInterval?
        if arm.early || control.early {
            let a = certain(arm), c = certain(control)
            bounds = ProportionInterval(low: rounded(a.low - c.high), high: rounded(a.high - c.low))
        }
        return Point(time: time, day: dayText(ResultsJoin.dayStart(time)), armDecided: arm.successes + arm.failures,
                     controlDecided: control.successes + control.failures, difference: difference, armRate: arm,
                     controlRate: control, bounds: bounds)
    }

    /// Where a rate of its exposed will end up for certain: its bounds, or the rate itself once none is pending.
    static func certain(_ rate: ResultsReport.Rate) -> (low: Double, high: Double) {
        if let bounds = rate.bounds { return (bounds.low, bounds.high) }
        let value = rate.rate ?? 0
        return (value, value)
    }

    static func exposed(_ arm: Arm, through dayStart: Int64) -> Int {
        arm.days.reduce(0) { $0 + ($1.start <= dayStart ? $1.exposed : 0) }
    }

    /// The arm's rate of `metric` as a report at the end of the day starting `dayStart` would count it
    /// (`.max`: at `now`), and its customers exposed (offered, for took offer) by then.
    static func rate(_ arm: Arm, _ metric: Metric, through dayStart: Int64) -> (exposed: Int, rate: ResultsReport.Rate) {
        var exposed = 0, yes = 0, no = 0
        for day in arm.days where day.start <= dayStart {
            switch metric {
            case .kept24h: (exposed, yes, no) = (exposed + day.exposed, yes + day.kept, no + day.notKept)
            case .renewed: (exposed, yes, no) = (exposed + day.exposed, yes + day.renewed, no + day.notRenewed)
            case .tookOffer: (exposed, yes, no) = (exposed + day.offered, yes + day.took, no + day.notTook)
            }
        }
        return (exposed, ResultsReport.Rate(successes: yes, failures: no, pending: exposed - yes - no))
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
