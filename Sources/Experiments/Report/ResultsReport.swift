/// Optional finer rows: each rule's customers split by what their first exposure served.
public enum ResultsBreakdown: String, Sendable, Codable, CaseIterable {
    case message
    case locale
    case product
    /// What serve knew of the customer when it answered (the decision's customer facts): the storefront,
    /// the tenure band, whether an offer was redeemed in the 90 days before, the billing state.
    case storefront, tenure, offers, billing

    /// Whether the breakdown is by a customer fact, where a value nobody signed reads "unknown".
    public var isCustomerFact: Bool {
        switch self {
        case .message, .locale, .product: false
        case .storefront, .tenure, .offers, .billing: true
        }
    }
}

/// The readout of decisions joined with outcomes: per flow and rule (each split arm is a rule), the
/// rates with their intervals, and each split arm compared with its control. The JSON form (format
/// version 2.2: 2.0's `paid` and `paidPerCustomer` replaced 1.x's `revenueRetained`, `netRevenue` and
/// `netRevenuePerExposedDifference`, which took the discount off twice; 2.1 added `adjusted` to the
/// comparisons' differences; 2.2 added `retention` to the rows and `retentionCurve` to the method,
/// `confirmatory` to the segment comparisons, `versus` (arm against arm) and `pooled` (a group's
/// periods combined), with `method.pooledDifferenceInterval`; fields are only ever added within 2.x)
/// is documented in docs/outcomes-and-experiments.md; keys are sorted, lists ordered, so the same
/// events, `now` and configuration give the same bytes.
public struct ResultsReport: Sendable, Codable, Equatable {
    public static let formatVersion = "2.2"

    public var formatVersion: String
    public var environment: String
    public var flow: String?
    /// ISO 8601 UTC; absent when the window starts at the first event.
    public var since: String?
    public var now: String
    public var method: Method
    public var rows: [Row]
    public var breakdown: ResultsBreakdown?
    public var breakdownRows: [Row]?
    /// With a breakdown: in each segment, each split arm against the segment's own control, the
    /// verdicts adjusted for every segment comparison shown (see `method.segmentAdjustment`).
    public var segmentComparisons: [SegmentComparison]?
    public var comparisons: [SplitComparison]
    /// On request (`results --versus ARM`): per period of ARM's group, every other arm against ARM
    /// instead of the control (absent otherwise).
    public var versus: [VersusComparison]? = nil
    /// For a split group seen in two periods or more: each arm against the control, the periods
    /// combined, stratified by period (see `method.pooledDifferenceInterval`); absent when no group has
    /// an arm and its control in two periods. Verdicts, the recommendation, guardrails and `promote`
    /// read the per-period comparisons only.
    public var pooled: [PooledComparison]? = nil
    public var events: EventCounts
    /// Checks on the data itself (see `Checks`).
    public var checks: Checks
    public var warnings: [String]

    /// The methods and windows behind every number, so a reader of the JSON alone can tell.
    public struct Method: Sendable, Codable, Equatable {
        public var rateInterval: String
        public var differenceInterval: String
        public var mixingStandardDeviation: Double
        public var confidence: Double
        public var keptWindowHours: Int
        public var renewalGraceDays: Int
        public var unknownExpiryCapDays: Int
        public var latenessHours: Int
        /// Payments count when charged within this many days after the exposure…
        public var paidHorizonDays: Int
        /// …and reported within this many days after the horizon; a customer's money is decided then.
        public var paymentLagDays: Int
        public var paidInterval: String
        public var paidDifferenceInterval: String
        /// How the segment comparisons are adjusted for their number, per family; absent without a breakdown.
        public var segmentAdjustment: String? = nil
        /// How `adjusted` on a comparison's rate differences is made (absent in reports before 2.1).
        public var adjustedDifferenceInterval: String? = nil
        /// How each row's `retention` is made and what "no longer subscribed" means (absent before 2.2).
        public var retentionCurve: String? = nil
        /// How `pooled` combines a group's periods (absent when there is no pooled comparison).
        public var pooledDifferenceInterval: String? = nil
    }

    /// One segment (a breakdown value) of one split group's period: its arms against its control.
    public struct SegmentComparison: Sendable, Codable, Equatable {
        public var flow: String
        public var splitGroup: String
        public var splitLayout: String?
        public var periodSince: String?
        /// The segment: the breakdown value (`DEU`, `12m+`, `unknown`, …).
        public var value: String
        /// For `--by message`: the message's name and locale in the manifests (`before-you-go (ja)`).
        public var valueName: String? = nil
        public var control: String?
        public var arms: [SegmentArm]
        /// The period's layout declares this breakdown (`;confirm=` — the Flow's `segments:` when its
        /// decisions were made): the comparison is in the confirmatory family, adjusted over the
        /// confirmatory comparisons alone; otherwise it is exploratory, adjusted over the exploratory ones.
        public var confirmatory: Bool = false
    }

    public struct SegmentArm: Sendable, Codable, Equatable {
        public var rule: String
        public var arm: String?
        /// The difference within the segment, its interval at the level Holm's procedure tested it at,
        /// and the verdict Holm's procedure gives over the report's segment comparisons of the metric in
        /// the same family (confirmatory or exploratory, see `SegmentComparison.confirmatory`).
        public var kept24h: Difference
        public var renewed: Difference
        /// The always-valid p-values of "no difference" before adjustment.
        public var kept24hPValue: Double?
        public var renewedPValue: Double?
    }

    /// A rate: `successes` of the `successes + failures` customers whose outcome is decided; `pending`
    /// customers are not decided yet and are in neither.
    public struct Rate: Sendable, Codable, Equatable {
        public var successes: Int
        public var failures: Int
        public var pending: Int
        public var rate: Double?
        /// Wilson score interval, 95%.
        public var interval: ProportionInterval?
        /// Over every exposed customer, decided or not: the rate if every pending customer fails
        /// (`low`) and if every one succeeds (`high`). Where the rate of these customers will end up,
        /// for certain. Nil when none is pending.
        public var bounds: ProportionInterval?
        /// Fewer decided than pending: the decided are not a fair sample yet (those who act decide at
        /// once, the others only at their deadline), so the rate over them is no estimate and the
        /// views show `bounds` instead.
        public var early: Bool

        init(successes: Int, failures: Int, pending: Int) {
            self.successes = successes
            self.failures = failures
            self.pending = pending
            let trials = successes + failures
            rate = trials > 0 ? rounded(Double(successes) / Double(trials)) : nil
            interval = WilsonInterval.interval(successes: successes, trials: trials).map {
                ProportionInterval(low: rounded($0.low), high: rounded($0.high))
            }
            let exposed = trials + pending
            bounds = pending > 0 ? ProportionInterval(low: rounded(Double(successes) / Double(exposed)),
                                                      high: rounded(Double(successes + pending) / Double(exposed))) : nil
            early = trials < pending
        }
    }

    public struct Row: Sendable, Codable, Equatable {
        public var flow: String
        public var rule: String
        public var splitGroup: String?
        public var arm: String?
        public var splitControl: Bool
        /// Every answer the rule gave in the window (`message`, `promotionalOffer`, `alternateProduct`, `advancedCommerce`, `none`).
        public var answers: [String]
        /// For breakdown rows: the message identifier, the locale Apple asked for (`localeRequested`: a holdout
        /// serves none) or product of the first exposure, or the customer fact.
        public var value: String?
        /// For `--by message`: the message's name and locale in the manifests (`before-you-go (ja)`); nil
        /// when the manifests do not name the identifier (an earlier upload, or no manifests).
        public var valueName: String? = nil
        public var exposed: Int
        public var kept24h: Rate
        /// Only for rules that answered an offer or an alternate product; pending until the renewal
        /// deadline, as `renewed` is.
        public var tookOffer: Rate?
        public var renewed: Rate
        /// Currency → milliunits (Apple's price unit): for the customers who took the offer, the
        /// product's regular price less the offer's price, where both are known. Information — what the
        /// offer cost against the regular price — and already inside `paid`, which counts the prices
        /// actually charged; never to be subtracted from it.
        public var discountGiven: [String: Int64]
        /// What the customers paid after their exposure, within the horizon (see `Paid`).
        public var paid: Paid
        /// Customers whose answer took longer than Apple waits (700 ms by serve's own clock): Apple
        /// showed them its fallback — App Store Connect's retention message, else the default — not this rule's answer.
        public var answeredLate: Int = 0
        /// Customers who redeemed an App Store Connect retention offer (`offerType` 5) after the answer,
        /// before their renewal deadline: App Store Connect's layer reached them.
        public var tookAppStoreConnectOffer: Int = 0
        /// For an arm: its group's layout when these customers were first exposed (`splitLayout` of the
        /// decisions: `arm-a*:0-4500,…`), absent for decisions recorded before layouts were. Each
        /// configuration of a group is a period of its own, with rows and comparisons of its own.
        public var splitLayout: String? = nil
        /// The period's first exposure (ISO 8601 UTC), for an arm with a layout.
        public var periodSince: String? = nil
        /// The retention curve: the share of the row's exposed customers still subscribed by whole days
        /// since their first exposure, from day 0 to the longest any was observed (Kaplan–Meier; see
        /// `method.retentionCurve`). Absent on breakdown rows and in reports before 2.2.
        public var retention: [KaplanMeier.Point]? = nil

        /// `45/45/10 since 2026-11-20T10:00:00.000Z`, or nil outside a period.
        public var periodLabel: String? { ResultsReport.periodLabel(splitLayout, since: periodSince) }
    }

    /// The arms of a layout with their shares: `arm-a 45% (control), arm-b 45%, holdout 10%`.
    public static func layoutText(_ layout: String) -> String {
        SplitLayoutText.arms(layout).map { "\($0.rule) \(SplitLayoutText.percentText($0.percent))%\($0.control ? " (control)" : "")" }
            .joined(separator: ", ")
    }

    public static func periodLabel(_ layout: String?, since: String?) -> String? {
        guard let layout else { return nil }
        let shares = SplitLayoutText.arms(layout).map { SplitLayoutText.percentText($0.percent) }.joined(separator: "/")
        return "period \(shares)" + (since.map { " since \($0)" } ?? "")
    }

    /// Money per exposed customer: every price the App Store charged an exposed customer within
    /// `method.paidHorizonDays` after the exposure — redemptions, renewals, switches, each charge once —
    /// over the customers whose horizon and lag have passed. Prices are what the customer paid as the
    /// App Store signed them (before Apple's commission and taxes), not proceeds.
    public struct Paid: Sendable, Codable, Equatable {
        /// Exposed customers whose horizon and lag have passed: every amount below is over them.
        public var decided: Int
        /// Exposed customers still inside their horizon or its lag.
        public var pending: Int
        /// Currency → what the decided customers paid in it. A customer who paid nothing counts in the
        /// denominator of every currency.
        public var currencies: [String: Amount]
        /// Payments a customer made in a second currency within the horizon (a storefront moved): not counted.
        public var otherCurrencyPayments: Int
    }

    public struct Amount: Sendable, Codable, Equatable {
        /// Σ paid by the decided customers, milliunits.
        public var milliunits: Int64
        public var payments: Int
        /// `milliunits / decided`, and its normal 95% interval (see `method.paidInterval`).
        public var perCustomer: Double
        public var interval: ProportionInterval?
        /// The customers' standard deviation, milliunits: what the comparison's interval is made of.
        public var standardDeviation: Double
        /// Payments for a period longer than the horizon (a yearly plan) — counted whole, so this
        /// arm's money within the horizon includes value for months after it.
        public var longerThanHorizon: Int
    }

    public struct Difference: Sendable, Codable, Equatable {
        /// The arm's rate minus the control's.
        public var difference: Double?
        /// Always-valid interval on the difference (see `method.differenceInterval`).
        public var interval: ProportionInterval?
        public var verdict: Verdict
        /// While not distinguishable: customers per arm at which the interval would exclude zero if
        /// today's rates were the truth (see `SampleSizeEstimate`), and how many more that is.
        public var customersPerArmNeeded: Int?
        public var moreCustomersPerArm: Int?
        /// Why no estimate is given although the arms are not distinguishable yet: too few decided
        /// customers (see `SampleSizeEstimate.minimumDecidedPerArm`).
        public var estimateWithheld: String?
        /// For a rate: the difference relative to the control's rate (0.27 is 27% more), beside the points.
        public var relative: Double? = nil
        /// On a split group's comparison (rates and paid per customer): the same difference adjusted for
        /// what was known of the customers before the exposure, beside the plain one (see `AdjustedDifference`).
        public var adjusted: AdjustedDifference? = nil
    }

    /// The difference adjusted for the customers' pre-exposure facts — Lin's regression estimator over
    /// the same decided customers as the plain difference (see `method.adjustedDifferenceInterval` and
    /// `RegressionAdjustment`). Shown beside the plain difference; the verdict, the recommendation and
    /// `promote` still read the plain one.
    public struct AdjustedDifference: Sendable, Codable, Equatable {
        /// The adjusted arm's rate (or paid per customer, milliunits) minus the control's; absent when `withheld`.
        public var difference: Double?
        /// Its interval at the comparison's level, of the kind `guarantee` names.
        public var interval: ProportionInterval?
        /// `always-valid`: the normal mixture of the plain difference over the adjusted estimate and its
        /// HC2 variance, so it may be read at every look as the plain one is.
        public var guarantee: String?
        /// The facts adjusted for, each level with a column of its own against the fact's reference.
        public var covariates: [RegressionAdjustment.Covariate]
        /// The adjusted interval's width over the plain interval's (0.7: 30% narrower).
        public var widthRatio: Double?
        /// Why there is no adjusted difference, when there is none.
        public var withheld: String?
    }

    public struct ArmComparison: Sendable, Codable, Equatable {
        public var rule: String
        public var arm: String?
        public var kept24h: Difference
        public var renewed: Difference
        /// Currency → paid per decided customer of the arm minus the control's, milliunits, with its
        /// always-valid interval and verdict (see `method.paidDifferenceInterval`).
        public var paidPerCustomer: [String: Difference]
    }

    public struct SplitComparison: Sendable, Codable, Equatable {
        public var flow: String
        public var splitGroup: String
        /// The rule the others are compared with; absent when the group has none.
        public var control: String?
        /// `splitControl` (marked in the manifest), `holdout` (the arm answering `none`), or absent.
        public var controlKind: String?
        /// The error rate of each comparison: 5% shared (Bonferroni) by the group's comparisons.
        public var alpha: Double
        public var arms: [ArmComparison]
        public var note: String?
        /// Exposures per arm against the configured percents; absent when the configuration was not read
        /// or does not name the group.
        public var sampleRatio: SampleRatio?
        /// Set when the verdicts of this group should not be trusted (a sample-ratio mismatch).
        public var verdictWarning: String?
        /// The period compared (see `Row.splitLayout`): absent for decisions recorded before layouts were.
        public var splitLayout: String? = nil
        public var periodSince: String? = nil
        /// One line saying what the evidence supports, on renewal (what `promote` decides on by default).
        public var recommendation: String? = nil
        /// The group's guardrails, each arm checked against each; absent when the group has none.
        public var guardrails: [GuardrailCheck]? = nil
    }

    /// `results --versus ARM`: in one period of ARM's group, every other arm against ARM — the
    /// always-valid difference (arm − ARM) at the group's error rate, and its verdict.
    public struct VersusComparison: Sendable, Codable, Equatable {
        public var flow: String
        public var splitGroup: String
        /// The arm the others are compared with.
        public var reference: String
        /// 5% shared (Bonferroni) by the period's comparisons against `reference`.
        public var alpha: Double
        public var arms: [ArmComparison]
        public var splitLayout: String?
        public var periodSince: String?
    }

    /// A split group's periods combined: each arm against the control, stratified by period — within
    /// each period the arm against that period's control, the differences then weighted by the inverse
    /// of their variances (see `method.pooledDifferenceInterval`).
    public struct PooledComparison: Sendable, Codable, Equatable {
        public var flow: String
        public var splitGroup: String
        public var control: String
        /// `all periods (stratified)`: how the views name the row.
        public var label: String
        /// The weights and the interval, named.
        public var method: String
        /// 5% shared (Bonferroni) by the group's pooled comparisons.
        public var alpha: Double
        public var arms: [PooledArm]
    }

    public struct PooledArm: Sendable, Codable, Equatable {
        public var rule: String
        public var arm: String?
        public var kept24h: Difference
        public var renewed: Difference
        /// Currency → paid per decided customer, arm − control, the periods combined.
        public var paidPerCustomer: [String: Difference]
        /// Each period the arm and the control were both in, with its share of each rate's weight (nil
        /// where either had no decided customer in that period, so the period adds nothing).
        public var periods: [PooledPeriod]
    }

    public struct PooledPeriod: Sendable, Codable, Equatable {
        public var splitLayout: String?
        public var periodSince: String?
        public var kept24hWeight: Double?
        public var renewedWeight: Double?
    }

    /// One arm against one guardrail: crossed when the always-valid interval on (arm − control) lies
    /// entirely more than `maxDrop` below zero, so checking every hour keeps false alarms under the
    /// group's error rate.
    public struct GuardrailCheck: Sendable, Codable, Equatable {
        public var rule: String
        /// `renewed`, `kept24h` or `paid`.
        public var metric: String
        /// Points for rates, currency units for money.
        public var maxDrop: Double
        /// For `paid`, the currency checked (each currency is checked on its own).
        public var currency: String?
        /// The interval's upper end, in points or currency units; absent while there is no interval yet.
        public var upperEnd: Double?
        public var crossed: Bool
    }

    /// The sample-ratio check of one split group (see `SampleRatioTest`).
    public struct SampleRatio: Sendable, Codable, Equatable {
        /// Rule → its configured percent, for the arms configured in this environment.
        public var configuredPercents: [String: Double]
        /// Rule → customers exposed in the window.
        public var exposed: [String: Int]
        public var chiSquare: Double?
        public var degreesOfFreedom: Int?
        public var pValue: Double?
        public var threshold: Double
        public var mismatch: Bool
        /// Why the test was not run, when it was not.
        public var note: String?
    }

    /// Checks on the data, as experimentation platforms run them. `configuration` names where the
    /// configured rules came from (`manifests DIR`); when absent, the checks that need it were not run.
    public struct Checks: Sendable, Codable, Equatable {
        public var configuration: String?
        /// Configured split arms (of groups whose window overlaps the report's) no customer was exposed to.
        public var armsWithoutExposures: [ConfiguredArm]
        /// Rules customers were exposed to that the configuration does not have (for this environment).
        public var rulesNotConfigured: [ExposedRule]
        /// The time outcomes are compared with (the clock of the run), and how many are dated after it
        /// by more than `clockToleranceSeconds`.
        public var clock: String
        public var clockToleranceSeconds: Int
        public var outcomesAfterClock: Int
        /// Keys whose every outcome in the window is dated before their first decision, although that
        /// decision is more than a day old.
        public var outcomesBeforeFirstDecision: [KeyTimes]
        /// Keys that outcomes carry and no decision in the window does.
        public var outcomeKeysWithoutDecisions: [KeyCount]
    }

    public struct ConfiguredArm: Sendable, Codable, Equatable {
        public var flow: String
        public var splitGroup: String
        public var rule: String
        public var percent: Double
    }

    public struct ExposedRule: Sendable, Codable, Equatable {
        public var flow: String
        public var rule: String
        public var exposed: Int
    }

    public struct KeyTimes: Sendable, Codable, Equatable {
        public var keyId: String
        public var outcomes: Int
        public var firstDecision: String
        public var lastOutcome: String
    }

    public struct KeyCount: Sendable, Codable, Equatable {
        public var keyId: String
        public var outcomes: Int
        public var decisionKeyIds: [String]
    }

    public struct EventCounts: Sendable, Codable, Equatable {
        public var decisions: Int
        public var outcomes: Int
        public var duplicates: Int
        public var late: Int
        public var invalid: Int
        public var outsideWindow: Int
        public var segments: Int
        public var keyIds: [String]
        /// Requests serve answered `{}` because it could not decide (shed under load, not ready, an
        /// error): those customers saw App Store Connect's layer or the default message, in no arm.
        public var fallbacks: Fallbacks
    }

    public struct Fallbacks: Sendable, Codable, Equatable {
        public var shed: Int
        public var notReady: Int
        public var error: Int

        public var total: Int { shed + notReady + error }
    }
}

func rounded(_ value: Double) -> Double {
    (value * 1_000_000).rounded() / 1_000_000
}

extension ResultsReport {
    /// The report narrowed to the rules `touched` names (`flow/rule`) and every rule of their split
    /// groups (an arm's evidence is its group's), with those groups' comparisons.
    public func restricted(to touched: Set<String>) -> ResultsReport {
        let groups = Set(rows.filter { touched.contains("\($0.flow)/\($0.rule)") }.compactMap { row in row.splitGroup.map { "\(row.flow)/\($0)" } })
        func keep(_ row: Row) -> Bool {
            touched.contains("\(row.flow)/\(row.rule)") || row.splitGroup.map { groups.contains("\(row.flow)/\($0)") } == true
        }
        var narrowed = self
        narrowed.rows = rows.filter(keep)
        narrowed.breakdownRows = breakdownRows?.filter(keep)
        narrowed.segmentComparisons = segmentComparisons?.filter { groups.contains("\($0.flow)/\($0.splitGroup)") }
        narrowed.comparisons = comparisons.filter { groups.contains("\($0.flow)/\($0.splitGroup)") }
        narrowed.versus = versus?.filter { groups.contains("\($0.flow)/\($0.splitGroup)") }
        narrowed.pooled = pooled.map { all in all.filter { groups.contains("\($0.flow)/\($0.splitGroup)") } }.flatMap { $0.isEmpty ? nil : $0 }
        return narrowed
    }
}

/// Reads a decision's `splitLayout`: `rule*:lower-upper,…` over 10,000 buckets, `*` marking the control,
/// then optional `;key=value` attributes, sorted by key (`;confirm=storefront+tenure`: the segments the
/// manifest declared for the group; `;match=…` when the arms match different customers). An attribute
/// this version does not know is split off and ignored, so a layout written by a newer serve still
/// gives its arms, periods and sample-ratio check.
enum SplitLayoutText {
    struct Arm: Equatable {
        var rule: String
        var percent: Double
        var control: Bool
    }

    /// The arms part of a layout, without its attributes.
    static func armsPart(_ layout: String) -> Substring {
        layout[..<(layout.firstIndex(of: ";") ?? layout.endIndex)]
    }

    /// The layout's `;key=value` attributes; a part without `=` is ignored.
    static func attributes(_ layout: String) -> [String: String] {
        var found: [String: String] = [:]
        for part in layout.split(separator: ";").dropFirst() {
            guard let equals = part.firstIndex(of: "=") else { continue }
            let key = String(part[..<equals])
            if found[key] == nil { found[key] = String(part[part.index(after: equals)...]) }
        }
        return found
    }

    /// True when the layout says its arms matched different customers (products, locales, window or
    /// customer conditions), so their exposures are not expected in the configured ratio.
    static func armsMatchDifferently(_ layout: String) -> Bool {
        attributes(layout)["match"] != nil
    }

    /// The breakdowns the manifest declared for the group when the layout was recorded (`confirm=`), sorted.
    static func confirmed(_ layout: String?) -> [String] {
        guard let layout, let value = attributes(layout)["confirm"] else { return [] }
        return value.split(separator: "+").map(String.init).sorted()
    }

    static func arms(_ layout: String) -> [Arm] {
        armsPart(layout).split(separator: ",").compactMap { part in
            guard let colon = part.lastIndex(of: ":") else { return nil }
            var rule = String(part[..<colon])
            let control = rule.hasSuffix("*")
            if control { rule.removeLast() }
            let bounds = part[part.index(after: colon)...].split(separator: "-").compactMap { Int($0) }
            guard bounds.count == 2 else { return nil }
            return Arm(rule: rule, percent: Double(bounds[1] - bounds[0]) / 100, control: control)
        }
    }

    /// `45`, `33.33`: a share of 10,000 buckets is at most two decimals.
    static func percentText(_ value: Double) -> String {
        let hundredths = Int((value * 100).rounded())
        let fraction = hundredths % 100
        return fraction == 0 ? String(hundredths / 100) : "\(hundredths / 100).\(fraction < 10 ? "0" : "")\(fraction)"
    }
}
