/// The rules as configured now for one environment, so the report can check the data against them:
/// exposures per split arm against the configured percents, configured arms nobody was exposed to,
/// and exposures of rules the configuration does not have. The `results` command builds it from the
/// manifests; the library depends on nothing that knows manifests.
public struct ResultsConfiguration: Sendable, Equatable {
    public struct Rule: Sendable, Equatable {
        public var flow: String
        public var rule: String
        public var splitGroup: String?
        /// The configured share of the group, in percent.
        public var percent: Double?
        /// Everything the rule matches on besides its split (products, locales, window), spelt so that
        /// equal conditions give equal text: the arms of a group are expected in the configured ratio
        /// only when they all match the same customers.
        public var audience: String
        /// The rule's window (`match.window`), milliseconds; nil for no bound.
        public var notBefore: Int64?
        public var notAfter: Int64?

        public init(flow: String, rule: String, splitGroup: String?, percent: Double?, audience: String = "",
                    notBefore: Int64? = nil, notAfter: Int64? = nil) {
            self.flow = flow
            self.rule = rule
            self.splitGroup = splitGroup
            self.percent = percent
            self.audience = audience
            self.notBefore = notBefore
            self.notAfter = notAfter
        }
    }

    /// A split group's guardrail (`guardrails:` of its Flow): an arm distinguishably worse than the
    /// control on `metric` by more than `maxDrop` (points for `renewed`/`kept24h`, currency units for `paid`).
    public struct Guardrail: Sendable, Equatable {
        public var flow: String
        public var group: String
        public var metric: String
        public var maxDrop: Double

        public init(flow: String, group: String, metric: String, maxDrop: Double) {
            self.flow = flow
            self.group = group
            self.metric = metric
            self.maxDrop = maxDrop
        }
    }

    /// Where the configuration came from, for the reader (`manifests in manifests/`).
    public var source: String
    /// The rules in force for the environment (rules whose `environments` exclude it are left out).
    public var rules: [Rule]

    public var guardrails: [Guardrail] = []

    /// Message identifier → the name and locale the manifests give it (`before-you-go (ja)`), so a
    /// breakdown by message reads as the team wrote it.
    public var messageNames: [String: String] = [:]

    public init(source: String, rules: [Rule], guardrails: [Guardrail] = [], messageNames: [String: String] = [:]) {
        self.source = source
        self.rules = rules
        self.guardrails = guardrails
        self.messageNames = messageNames
    }
}
