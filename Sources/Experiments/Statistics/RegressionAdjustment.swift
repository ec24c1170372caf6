/// The difference `treatment − control` adjusted for what was known of each customer before the
/// exposure — Lin's regression estimator ("Agnostic notes on regression adjustments to experimental
/// data", Annals of Applied Statistics 7(1), 2013), the regression form of CUPED:
///
/// - each pre-exposure fact is a set of indicator columns, one per level (unknown is a level of its
///   own, never a guess), measured against the fact's most common level;
/// - each arm gets its own least-squares fit of the outcome on those columns, centred at the mean of
///   both arms' customers together, so each fit's intercept is the arm's mean outcome had its customers
///   had the facts of all the group's customers; the estimate is the difference of the intercepts.
///   Fitting each arm on its own is the regression with arm-by-covariate interactions: unlike one
///   pooled slope (CUPED's single θ), it is never less precise than the plain difference in large
///   samples, whatever the split's shares and however the effect varies between customers;
/// - its variance is the heteroskedasticity-robust HC2 sandwich of each fit's intercept, summed over the
///   two arms (the centre is treated as fixed, as in Lin's paper: exact when the arm's effect is the
///   same for everyone, slightly small otherwise).
///
/// The estimator needs only each arm's counts per combination of levels (a `Cell`): a customer's
/// outcome enters through `count`, `Σy` and `Σy²` of their cell, so yes-or-no outcomes and amounts are
/// handled alike and the join keeps no customer.
///
/// A level gets a column only when each arm has at least `minimumLevelCustomers` decided customers with
/// it and as many without it; a level with fewer is counted with the fact's reference level. Columns
/// that repeat others (facts unknown for exactly the same customers) are dropped. Nothing is adjusted
/// while an arm has fewer than `SampleSizeEstimate.minimumDecidedPerArm` decided customers.
public enum RegressionAdjustment {
    /// Each level with a column of its own needs this many decided customers with it, and this many
    /// without it, in each arm.
    public static let minimumLevelCustomers = 30

    /// One combination of fact levels in one arm: how many decided customers had it, and the sum and
    /// the sum of squares of their outcomes (1 for a success, 0 for a failure; milliunits for money).
    public struct Cell: Sendable, Hashable {
        public var levels: [String]
        public var count: Int
        public var total: Double
        public var squares: Double

        public init(levels: [String], count: Int, total: Double, squares: Double) {
            self.levels = levels
            self.count = count
            self.total = total
            self.squares = squares
        }
    }

    /// A fact the estimate adjusted for: the levels with a column of their own, each measured against
    /// `reference` (which also holds every level with too few customers for a column).
    public struct Covariate: Sendable, Codable, Equatable {
        public var name: String
        public var reference: String
        public var levels: [String]
    }

    public struct Estimate: Sendable, Equatable {
        public var difference: Double
        /// The HC2 variance of `difference`.
        public var variance: Double
        public var covariates: [Covariate]
        /// Decided customers in the treatment and the control arm.
        public var customers: (treatment: Int, control: Int)

        public static func == (lhs: Estimate, rhs: Estimate) -> Bool {
            lhs.difference == rhs.difference && lhs.variance == rhs.variance && lhs.covariates == rhs.covariates
                && lhs.customers == rhs.customers
        }
    }

    public enum Result: Sendable, Equatable {
        case estimate(Estimate)
        /// Why there is no adjusted difference, in a sentence the views show.
        case withheld(String)
    }

    /// The adjusted difference of `treatment` against `control`, whose cells name their levels in the
    /// order of `covariates` (the facts' names).
    public static func estimate(covariates names: [String], treatment: [Cell], control: [Cell]) -> Result {
        let n = (treatment: treatment.reduce(0) { $0 + $1.count }, control: control.reduce(0) { $0 + $1.count })
        let minimum = SampleSizeEstimate.minimumDecidedPerArm
        guard n.treatment >= minimum, n.control >= minimum else {
            return .withheld("too few decided customers to adjust (\(n.treatment) and \(n.control); it needs \(minimum) in each)")
        }
        let chosen = columns(names: names, treatment: treatment, control: control, n: n)
        guard !chosen.isEmpty else {
            return .withheld("no pre-exposure fact has a level with \(minimumLevelCustomers) decided customers in each arm and "
                             + "\(minimumLevelCustomers) without it: nothing to adjust for")
        }
        let pooled = treatment + control
        let total = Double(n.treatment + n.control)
        let centre = chosen.map { column in pooled.reduce(0.0) { $0 + (column.has($1) ? Double($1.count) : 0) } / total }
        // Columns that repeat earlier ones over both arms' customers (the same customers unknown for two
        // facts) are dropped; each arm's own fit is then of full rank or the estimate is withheld.
        let dependent = Set(SmallCholesky(gram(pooled, chosen, centre), size: chosen.count + 1).dependent)
        let kept = chosen.indices.filter { !dependent.contains($0 + 1) }
        let columns = kept.map { chosen[$0] }
        let centred = kept.map { centre[$0] }
        guard !columns.isEmpty, !dependent.contains(0),
              let fitTreatment = fit(treatment, columns, centred), let fitControl = fit(control, columns, centred) else {
            return .withheld("the pre-exposure facts repeat one another within an arm: nothing to adjust for")
        }
        var covariates: [Covariate] = []
        for column in columns {
            if let last = covariates.last, last.name == names[column.covariate] {
                covariates[covariates.count - 1].levels.append(column.level)
            } else {
                covariates.append(Covariate(name: names[column.covariate], reference: column.reference, levels: [column.level]))
            }
        }
        return .estimate(Estimate(difference: fitTreatment.mean - fitControl.mean, variance: fitTreatment.variance + fitControl.variance,
                                  covariates: covariates, customers: n))
    }

    /// An indicator column: customers whose fact `covariate` is `level`.
    struct Column {
        var covariate: Int
        var level: String
        var reference: String

        func has(_ cell: Cell) -> Bool { cell.levels[covariate] == level }
    }

    /// Per fact, in order, each level (by name) that has enough customers with and without it in both
    /// arms, against the fact's most common level (the first by name among equals).
    static func columns(names: [String], treatment: [Cell], control: [Cell], n: (treatment: Int, control: Int)) -> [Column] {
        var chosen: [Column] = []
        for covariate in names.indices {
            var counts: [String: (treatment: Int, control: Int)] = [:]
            for cell in treatment { counts[cell.levels[covariate], default: (0, 0)].treatment += cell.count }
            for cell in control { counts[cell.levels[covariate], default: (0, 0)].control += cell.count }
            let levels = counts.keys.sorted()
            guard let reference = levels.max(by: { a, b in
                let (x, y) = (counts[a]!, counts[b]!)
                return (x.treatment + x.control, b) < (y.treatment + y.control, a)
            }) else { continue }
            let m = minimumLevelCustomers
            for level in levels where level != reference {
                let count = counts[level]!
                if count.treatment >= m, count.control >= m, n.treatment - count.treatment >= m, n.control - count.control >= m {
                    chosen.append(Column(covariate: covariate, level: level, reference: reference))
                }
            }
        }
        return chosen
    }

    /// A customer's row of the design: 1, then each column's indicator less its centre.
    static func row(_ cell: Cell, _ columns: [Column], _ centre: [Double]) -> [Double] {
        [1] + columns.indices.map { (columns[$0].has(cell) ? 1 : 0) - centre[$0] }
    }

    /// `Σ count·z·zᵀ` over the cells, row-major.
    static func gram(_ cells: [Cell], _ columns: [Column], _ centre: [Double]) -> [Double] {
        let size = columns.count + 1
        var matrix = [Double](repeating: 0, count: size * size)
        for cell in cells where cell.count > 0 {
            let z = row(cell, columns, centre)
            for i in 0 ..< size {
                for j in 0 ..< size { matrix[i * size + j] += Double(cell.count) * z[i] * z[j] }
            }
        }
        return matrix
    }

    /// One arm's least-squares fit: its intercept (the arm's mean at the centre) and the intercept's HC2
    /// variance, `Σᵢ (wᵀzᵢ)² eᵢ² / (1 − hᵢ)` with `w = G⁻¹e₀`, `hᵢ = zᵢᵀG⁻¹zᵢ`; nil when a column repeats
    /// others within the arm.
    static func fit(_ cells: [Cell], _ columns: [Column], _ centre: [Double]) -> (mean: Double, variance: Double)? {
        let size = columns.count + 1
        let factor = SmallCholesky(gram(cells, columns, centre), size: size)
        guard factor.dependent.isEmpty else { return nil }
        var moments = [Double](repeating: 0, count: size)
        for cell in cells {
            let z = row(cell, columns, centre)
            for i in 0 ..< size { moments[i] += cell.total * z[i] }
        }
        let beta = factor.solve(moments)
        let w = factor.solve([1] + [Double](repeating: 0, count: columns.count))
        var variance = 0.0
        for cell in cells where cell.count > 0 {
            let z = row(cell, columns, centre)
            let fitted = zip(z, beta).reduce(0) { $0 + $1.0 * $1.1 }
            let leverage = zip(z, factor.solve(z)).reduce(0) { $0 + $1.0 * $1.1 }
            let weight = zip(z, w).reduce(0) { $0 + $1.0 * $1.1 }
            // Σ over the cell's customers of (y − fitted)², from its sums.
            let residuals = max(0, cell.squares - 2 * fitted * cell.total + Double(cell.count) * fitted * fitted)
            guard leverage < 1 else { return nil }
            variance += weight * weight * residuals / (1 - leverage)
        }
        return (beta[0], variance)
    }
}
