import EventContract
import RetentionMessagingModels

/// The streaming join of decisions and outcomes into per-rule counts, by the definitions of the event
/// contract (docs/results-sql.md spells the same definitions as SQL).
///
/// How memory stays bounded: partitions are read oldest first, and events are released to the join in
/// time order once no partition still to come can hold an earlier event (`lateness` behind the start
/// of the next partition). The join keeps only
/// - the customers whose outcome window is still open — one `OpenExposure` each (104 bytes, in chunks
///   that growing never copies), closed and counted as soon as an event later than its window arrives
///   (a heap orders the closings);
/// - per customer, one 56-byte entry of a `CustomerTable`: the first of their open exposures, and the
///   expiry date while their subscription period (plus grace) is still running, since an exposure needs
///   "the expiry current at exposure" — read as absent once it lapsed, and dropped by a sweep once a day
///   of events has passed;
/// - one 64-bit fingerprint per (customer, rule) exposed in the window, so a customer counts once per
///   arm (8 to 16 bytes each in the set; a collision among 10 million pairs has odds near 1 in 300,000);
/// - for the retention curve, one `SurvivalWatch` (16 bytes) per (customer, rule) first exposure whose
///   customer is not lost yet, chained from the customer's entry, and per row the losses and
///   censorings by whole hours since exposure;
/// - the events of the partitions not yet released (one hour plus the lateness) and their ids, to
///   drop duplicates.
struct ResultsJoin {
    /// How far an event may lie in a partition later than its own time's hour and still be joined in order.
    static let lateness: Int64 = EventTime.hour
    static let keptWindow: Int64 = 24 * EventTime.hour
    static let renewalGrace: Int64 = 7 * EventTime.day
    /// An exposure whose expiry is unknown waits this long for a DID_RENEW or EXPIRED before it is final.
    static let unknownExpiryCap: Int64 = 400 * EventTime.day
    /// How long after the paid horizon's end a payment's notification may still arrive and count: a
    /// customer's money is decided only once the horizon and this lag have passed.
    static let paymentLag: Int64 = 7 * EventTime.day
    static let defaultPaidHorizon: Int64 = 35 * EventTime.day

    var parser = EventLineParser()
    let now: Int64
    let since: Int64
    /// Payments count when charged in (exposure, exposure + `paidHorizon`].
    let paidHorizon: Int64
    let flowFilter: Int32?
    let breakdown: Bool
    let dimensionOf: (Event) -> Int32
    /// Whether to keep `days` (only the HTML view draws it; the other views skip the cost).
    let daily: Bool

    /// Per row and UTC day (its start): customers first exposed that day, and the outcomes decided that
    /// day. Summed up to a day's end they are exactly the row's exposures and decided counts of a report
    /// with `now` at that day's end. Kept at 24 h is decided 24 h after the exposure, by a turn-off
    /// within those hours. Renewed and took offer are decided by an outcome (counted on the day of the
    /// outcome's time) or by the renewal deadline passing (on the day after it ends); an outcome can
    /// move a customer from one side to the other (an EXPIRED, then a renewal within the grace period),
    /// so a day holds changes: −1 on the side left, +1 on the side joined.
    private(set) var days: [ArmKey: [Int64: DayCounts]] = [:]

    struct DayCounts: Equatable {
        var exposed = 0
        var kept = 0
        var notKept = 0
        var renewed = 0
        var notRenewed = 0
        /// Customers first exposed that day to an answer with an offer (or alternate product) to take.
        var offered = 0
        var took = 0
        var notTook = 0
    }

    /// Where a customer stands on renewing and taking the offer as outcomes arrive, the deadline aside:
    /// 1 decided yes, −1 decided no, 0 pending (and 0 for taking when nothing was offered).
    struct DecidedState: Equatable {
        var renewed: Int8
        var took: Int8

        init(_ x: OpenExposure) {
            renewed = x.renewed ? 1 : x.expired ? -1 : 0
            took = !x.isOffered ? 0 : x.took ? 1 : (x.renewed || x.expired) ? -1 : 0
        }
    }

    private(set) var tallies: [ArmKey: Tally] = [:]
    /// Every combination of pre-exposure facts a customer was first exposed with, numbered in the order
    /// first seen (`OpenExposure.facts`); `FactCell.overflow` stands for any beyond the 65,535th.
    private(set) var factCells: [FactCell] = []
    private var factCellIds: [FactCell: UInt16] = [:]
    private(set) var breakdownTallies: [ArmKey: [Int32: Tally]] = [:]
    private(set) var armInfo: [ArmKey: ArmInfo] = [:]
    private(set) var keyIds: Set<Int32> = []
    private(set) var counts = Counts()
    /// Per pseudonym key: how many decisions (with a customer) and outcomes carry it in the window, and
    /// when its first decision and its last outcome were — what the clock and secret checks compare.
    private(set) var keyActivity: [Int32: KeyActivity] = [:]
    /// Outcomes dated later than `futureLimit` (the clock of the run, plus a tolerance): a clock mix-up.
    private(set) var futureOutcomes: Set<EventKey> = []
    let futureLimit: Int64

    struct KeyActivity {
        var decisions = 0
        var outcomes = 0
        var firstDecision = Int64.max
        var lastOutcome = Int64.min
    }

    struct Counts {
        var decisions = 0
        var outcomes = 0
        var duplicates = 0
        var late = 0
        var invalid = 0
        var outsideWindow = 0
        var segments = 0
        var peakOpenExposures = 0
        /// Decisions answered `{}` because serve could not decide: shed, not ready, an error.
        var shed = 0
        var notReady = 0
        var failed = 0
    }

    /// Apple waits this long for the realtime answer, then shows its fallback.
    static let appleBudgetMicros: Int64 = 700_000
    /// `offerType` of a redeemed App Store Connect retention offer.
    static let retentionOfferType: Int64 = 5

    private var pending: [Event] = []
    private var watermark = Int64.min
    private var seen: [Int64: PairSet] = [:]
    private var exposures = ChunkedArray<OpenExposure>()
    private var free: [Int32] = []
    private var closing = MinHeap<Int32>()
    /// Per customer whose subscription period is running, who is watched for the retention curve, or
    /// whose outcome window is open: the latest expiry known, the first of their survival watches and
    /// the first of their open exposures.
    private var customers = CustomerTable(capacity: 1 << 12)
    /// One per (customer, row) first exposure whose customer is still subscribed as far as the events
    /// tell: what the retention curve follows after the outcome window closed.
    private var watches = ChunkedArray<SurvivalWatch>()
    /// The rows watches belong to, by `SurvivalWatch.arm`, and each row's place in that list.
    private var watchedArms: [ArmKey] = []
    private var watchedArmIndex: [ArmKey: Int32] = [:]
    private var freeWatches: [Int32] = []
    /// Per row: its customers lost and censored, by whole hours since their first exposure.
    private(set) var survival: [ArmKey: SurvivalCounts] = [:]
    /// When the next sweep drops the expiries that lapsed.
    private var nextSweep = Int64.min
    private var exposed = FingerprintSet(capacity: 1 << 16)
    private var regularPrice: [Int64: Int64] = [:]

    private let didChangeRenewalStatus: Int32
    private let autoRenewDisabled: Int32
    private let didRenew: Int32
    private let expired: Int32
    private let offerRedeemed: Int32
    private let subscribed: Int32
    private let didChangeRenewalPref: Int32
    private let refund: Int32
    private let revoke: Int32

    init(now: Int64, since: Int64, flow: String?, breakdown: ResultsBreakdown?, futureLimit: Int64 = Int64.max, daily: Bool = false,
         paidHorizon: Int64 = defaultPaidHorizon) {
        self.now = now
        self.paidHorizon = paidHorizon
        self.daily = daily
        self.since = since
        self.futureLimit = futureLimit
        didChangeRenewalStatus = parser.interner.intern(NotificationType.didChangeRenewalStatus.rawValue)
        autoRenewDisabled = parser.interner.intern(NotificationSubtype.autoRenewDisabled.rawValue)
        didRenew = parser.interner.intern(NotificationType.didRenew.rawValue)
        expired = parser.interner.intern(NotificationType.expired.rawValue)
        offerRedeemed = parser.interner.intern(NotificationType.offerRedeemed.rawValue)
        subscribed = parser.interner.intern(NotificationType.subscribed.rawValue)
        didChangeRenewalPref = parser.interner.intern(NotificationType.didChangeRenewalPref.rawValue)
        refund = parser.interner.intern(NotificationType.refund.rawValue)
        revoke = parser.interner.intern(NotificationType.revoke.rawValue)
        if let flow {
            flowFilter = parser.interner.intern(flow)
        } else {
            flowFilter = nil
        }
        self.breakdown = breakdown != nil
        switch breakdown {
        case .message?: dimensionOf = { $0.message }
        case .locale?: dimensionOf = { $0.locale }
        case .product?: dimensionOf = { $0.product }
        case .storefront?: dimensionOf = { $0.storefront }
        case .tenure?: dimensionOf = { $0.tenureBand }
        case .offers?: dimensionOf = { $0.offerRecent }
        case .billing?: dimensionOf = { $0.billing }
        case nil: dimensionOf = { _ in 0 }
        }
    }

    mutating func countSegment() {
        counts.segments += 1
    }

    /// Looks at an outcome of a partition the report does not read (later than its window) only to
    /// count it when it is dated after the run's clock.
    mutating func inspectFuture(_ event: Event) {
        guard event.isOutcome, event.hasId, event.time != Event.absent, event.time > futureLimit else { return }
        futureOutcomes.insert(event.id)
    }

    func string(_ id: Int32) -> String? {
        parser.interner.string(id)
    }

    /// Takes one parsed event from a partition being read.
    mutating func ingest(_ event: Event) {
        guard event.time != Event.absent, event.hasId else {
            counts.invalid += 1
            return
        }
        if event.isOutcome, event.time > futureLimit { futureOutcomes.insert(event.id) }
        guard event.time >= since, event.time <= now else {
            counts.outsideWindow += 1
            return
        }
        if event.time < watermark {
            counts.late += 1
            return
        }
        let hour = EventTime.hourStart(event.time)
        // An event is the same event only under the same pseudonym key: during a rotation one
        // notification is recorded under both keys with one eventId.
        let high = event.id.high ^ Self.keyMix(event.customer.keyId)
        for (bucketHour, bucket) in seen where bucketHour != hour && bucket.contains(high, event.id.low) {
            counts.duplicates += 1
            return
        }
        guard seen[hour, default: PairSet()].insert(high, event.id.low) else {
            counts.duplicates += 1
            return
        }
        pending.append(event)
    }

    /// Joins, in time order, every pending event earlier than `time`: no partition still to come holds one.
    mutating func release(before time: Int64) {
        var ready: [Event] = []
        var rest: [Event] = []
        for event in pending {
            if event.time < time { ready.append(event) } else { rest.append(event) }
        }
        pending = rest
        // Outcomes first at equal times: the expiry "at or before" an exposure includes its own instant,
        // and an outcome at the exposure's instant is not after it.
        ready.sort { ($0.time, $0.isOutcome ? 0 : 1, $0.id.high, $0.id.low) < ($1.time, $1.isOutcome ? 0 : 1, $1.id.high, $1.id.low) }
        for event in ready {
            closeWindows(before: event.time)
            if event.isOutcome { join(outcome: event) } else { join(decision: event) }
        }
        watermark = max(watermark, time)
        for hour in seen.keys where hour + EventTime.hour <= watermark { seen[hour] = nil }
        if watermark >= nextSweep { sweepExpiries() }
    }

    /// Drops every expiry that lapsed before the watermark: every event still to come is at or after it,
    /// so each would read that expiry as absent anyway. Once a day of events, not at each lapse: a heap
    /// of lapse times cost more memory than the day's lapsed entries do.
    private mutating func sweepExpiries() {
        let watermark = watermark
        let lapsed = customers.customers { $0.expiry != Event.absent && $0.expiry + Self.renewalGrace < watermark }
        for customer in lapsed {
            guard let slot = customers.index(of: customer) else { continue }
            // A watched customer is lost only once the grace period has passed by `now`: past it, the
            // watermark (at the end, the largest time) says only that no event is still to come.
            if customers[slot].watch >= 0 {
                settleLapse(at: slot, time: min(watermark, now))
            } else {
                customers[slot].expiry = Event.absent
            }
            customers.removeIfEmpty(at: slot)
        }
        nextSweep = watermark > Int64.max - EventTime.day ? Int64.max : watermark + EventTime.day
    }

    /// Counts every exposure still open, as things stand at `now`.
    mutating func finish() {
        release(before: Int64.max)
        closeWindows(before: Int64.max)
        // Every customer still watched: lost if their period lapsed unrenewed; else observed up to
        // `now`, or only up to their expiry while a renewal may still come within the grace period.
        for customer in customers.customers(where: { $0.watch >= 0 }) {
            guard let slot = customers.index(of: customer) else { continue }
            let expiry = customers[slot].expiry
            if expiry != Event.absent, expiry + Self.renewalGrace < now {
                endWatches(at: slot, time: expiry, lost: true)
            } else {
                endWatches(at: slot, time: expiry != Event.absent ? min(expiry, now) : now, lost: false)
            }
        }
    }

    /// Starts following a customer's first exposure to a row for the retention curve (their entry at `slot`).
    private mutating func watch(at slot: Int, arm: ArmKey, time: Int64) {
        let index: Int32
        if let known = watchedArmIndex[arm] {
            index = known
        } else {
            index = Int32(watchedArms.count)
            watchedArms.append(arm)
            watchedArmIndex[arm] = index
        }
        let watch = SurvivalWatch(time: time, arm: index, next: customers[slot].watch)
        if let reused = freeWatches.popLast() {
            watches[reused] = watch
            customers[slot].watch = reused
        } else {
            customers[slot].watch = watches.append(watch)
        }
    }

    /// A customer whose period ended more than the grace period before `time` with no renewal seen
    /// was lost at its end; the lapsed expiry is dropped, as the daily sweep would (`currentExpiry`
    /// reads it as absent already). The caller removes the entry if nothing is left in it.
    private mutating func settleLapse(at slot: Int, time: Int64) {
        let entry = customers[slot]
        guard entry.expiry != Event.absent, entry.expiry + Self.renewalGrace < time else { return }
        if entry.watch >= 0 { endWatches(at: slot, time: entry.expiry, lost: true) }
        customers[slot].expiry = Event.absent
    }

    /// Counts every watch of the customer (at `slot`) as lost (or censored) at `time`, and stops
    /// following them.
    private mutating func endWatches(at slot: Int, time: Int64, lost: Bool) {
        var cursor = customers[slot].watch
        while cursor >= 0 {
            let watch = watches[cursor]
            let hours = Int32(clamping: max(0, time - watch.time) / EventTime.hour)
            survival[watchedArms[Int(watch.arm)], default: SurvivalCounts()].add(hours, lost: lost)
            freeWatches.append(cursor)
            cursor = watch.next
        }
        customers[slot].watch = -1
    }

    /// What an outcome says of the watched customer's subscription: a refund or a revocation ends it at
    /// its time; an EXPIRED at the end of the period it names (else the one known, else its own time).
    private mutating func followWatches(_ event: Event, at slot: Int) {
        settleLapse(at: slot, time: event.time)
        let entry = customers[slot]
        guard entry.watch >= 0 else { return }
        let type = event.notificationType
        if type == refund || type == revoke {
            endWatches(at: slot, time: event.time, lost: true)
        } else if type == expired {
            let end = event.expiresDate != Event.absent && event.expiresDate <= event.time ? event.expiresDate
                : entry.expiry != Event.absent && entry.expiry <= event.time ? entry.expiry : event.time
            endWatches(at: slot, time: end, lost: true)
        }
    }

    private mutating func closeWindows(before time: Int64) {
        while let top = closing.top, top.time < time {
            _ = closing.pop()
            finalise(top.index)
        }
    }

    /// The expiry current at `time` of the customer at `slot`: the latest one known, unless it lapsed
    /// (the grace period after it ended before `time`).
    private func currentExpiry(at slot: Int?, time: Int64) -> Int64? {
        guard let slot else { return nil }
        let expiry = customers[slot].expiry
        guard expiry != Event.absent, expiry + Self.renewalGrace >= time else { return nil }
        return expiry
    }

    private mutating func join(decision event: Event) {
        counts.decisions += 1
        keyIds.insert(event.customer.keyId)
        if event.hasCustomer {
            var activity = keyActivity[event.customer.keyId] ?? KeyActivity()
            activity.decisions += 1
            activity.firstDecision = min(activity.firstDecision, event.time)
            keyActivity[event.customer.keyId] = activity
        }
        switch event.answer {
        case .shed: counts.shed += 1
        case .notReady: counts.notReady += 1
        case .error: counts.failed += 1
        default: break
        }
        guard event.answer.exposes, event.rule != Interner.null, event.hasCustomer else { return }
        if let flowFilter, event.flow != flowFilter { return }
        let grouped = event.splitGroup != Interner.null
        let arm = ArmKey(flow: event.flow, rule: event.rule, layout: grouped ? event.splitLayout : Interner.null)
        // A customer counts once per split group, in the arm and period of their first exposure (a
        // re-weight that moves them later starts no second count); once per rule outside a group.
        let once = grouped ? ArmKey(flow: event.flow, rule: -1 - event.splitGroup) : arm
        guard exposed.insert(Self.fingerprint(event.customer, once)) else {
            // Seen before: the rule's description still follows its latest decisions.
            // (Changed in place: a copy taken out and stored back would copy the set at every decision.)
            armInfo[arm]?.answers.insert(event.answer.rawValue)
            return
        }
        Self.describe(&armInfo[arm, default: ArmInfo()], by: event)

        let dimension = breakdown ? dimensionOf(event) : 0
        tallies[arm, default: Tally()].exposed += 1
        // The customer's entry: found or made once, for the lapse, the watch, the deadline and the head.
        let slot = customers.insert(event.customer)
        settleLapse(at: slot, time: event.time)
        watch(at: slot, arm: arm, time: event.time)
        if breakdown { breakdownTallies[arm, default: [:]][dimension, default: Tally()].exposed += 1 }

        var deadline = event.time + Self.unknownExpiryCap
        if let expiry = currentExpiry(at: slot, time: event.time) {
            deadline = expiry + Self.renewalGrace
        }
        let offered = event.answer == .promotionalOffer ? event.offer
            : event.answer == .alternateProduct ? event.alternateProduct : Interner.null
        var exposure = OpenExposure(customerHash: CustomerTable.hash(event.customer), arm: arm, dimension: dimension, time: event.time,
                                    deadline: deadline, answer: event.answer, offered: offered)
        exposure.lastPaid = event.time
        exposure.answeredLate = event.latencyMicros != Event.absent && event.latencyMicros > Self.appleBudgetMicros
        exposure.facts = factCellId(FactCell(storefront: event.storefront, tenureBand: event.tenureBand,
                                             offerWithin90Days: event.offerRecent, billing: event.billing))
        exposure.next = customers[slot].head
        let index: Int32
        if let reused = free.popLast() {
            index = reused
            exposures[index] = exposure
        } else {
            index = exposures.append(exposure)
        }
        customers[slot].head = index
        // When no later outcome can change anything: the latest of 24 hours, the deadline and the paid
        // horizon's end with its lag.
        closing.push(max(event.time + Self.keptWindow, deadline, event.time + paidHorizon + Self.paymentLag), index)
        counts.peakOpenExposures = max(counts.peakOpenExposures, closing.count)
    }

    /// What a row's first exposure of a customer tells of it.
    private static func describe(_ info: inout ArmInfo, by event: Event) {
        info.splitGroup = event.splitGroup
        info.arm = event.arm
        info.splitControl = event.splitControl
        info.answers.insert(event.answer.rawValue)
        info.firstExposure = min(info.firstExposure, event.time)
    }

    /// The number of a combination of facts, numbering it when it is new.
    private mutating func factCellId(_ cell: FactCell) -> UInt16 {
        if let id = factCellIds[cell] { return id }
        guard factCells.count < Int(FactCell.overflow) else { return FactCell.overflow }
        let id = UInt16(factCells.count)
        factCells.append(cell)
        factCellIds[cell] = id
        return id
    }

    private mutating func join(outcome event: Event) {
        counts.outcomes += 1
        keyIds.insert(event.customer.keyId)
        guard event.hasCustomer else { return }
        var activity = keyActivity[event.customer.keyId] ?? KeyActivity()
        activity.outcomes += 1
        activity.lastOutcome = max(activity.lastOutcome, event.time)
        keyActivity[event.customer.keyId] = activity
        let type = event.notificationType
        let found = customers.index(of: event.customer)
        var cursor = found.map { customers[$0].head } ?? -1
        // With `daily`: the customers this outcome decided (or moved), for the day of its time.
        var changes: [(arm: ArmKey, before: DecidedState, after: DecidedState)] = []
        let daily = daily
        while cursor >= 0 {
            let t = event.time
            exposures.update(cursor) { x in
                guard x.time < t else { return }
                let before = DecidedState(x)
                defer {
                    if daily, DecidedState(x) != before { changes.append((x.arm, before, DecidedState(x))) }
                }
                // Taking the offer counts until the renewal decides (a renewal that carries the offer or
                // the product is itself the taking); later redemptions belong to another period.
                let renewedBefore = x.renewed
                if type == didChangeRenewalStatus, event.subtype == autoRenewDisabled, t <= x.time + Self.keptWindow {
                    x.turnedOff = true
                }
                Self.pay(event, to: &x, horizon: paidHorizon)
                guard t <= x.deadline else { return }
                if type == didRenew, !x.renewed, event.effectiveDate != Event.absent,
                   event.effectiveDate > x.time, event.effectiveDate <= x.deadline {
                    x.renewed = true
                    x.renewedPrice = event.price
                    x.renewedCurrency = event.currency
                }
                if type == expired { x.expired = true }
                if event.offerType == Self.retentionOfferType, type == offerRedeemed || type == didRenew || type == subscribed {
                    x.tookStoreOffer = true
                }
                if !x.took, !renewedBefore {
                    if x.answer == .promotionalOffer, x.offered != Interner.null, event.offer == x.offered,
                       type == offerRedeemed || type == didRenew || type == subscribed {
                        x.took = true
                        if event.price != Event.absent, event.currency != Interner.null,
                           let regular = regularPrice[Self.priceKey(event.product, event.currency)] {
                            x.discount = max(0, regular - event.price)
                            x.discountCurrency = event.currency
                        }
                    } else if x.answer == .alternateProduct, x.offered != Interner.null,
                              (type == didChangeRenewalPref && event.autoRenewProduct == x.offered)
                                || (type == didRenew && (event.autoRenewProduct == x.offered || event.product == x.offered)) {
                        x.took = true
                    }
                }
            }
            cursor = exposures[cursor].next
        }
        for change in changes {
            move(change.arm, day: Self.dayStart(event.time), from: change.before, to: change.after)
        }
        if let found { followWatches(event, at: found) }
        if event.expiresDate != Event.absent, event.expiresDate > currentExpiry(at: found, time: event.time) ?? Int64.min {
            customers[found ?? customers.insert(event.customer)].expiry = event.expiresDate
        } else if let found {
            customers.removeIfEmpty(at: found)
        }
        // A price paid without an offer is the product's regular price in that currency, for discounts.
        if event.offerType == Event.absent, event.price != Event.absent, event.product != Interner.null, event.currency != Interner.null {
            regularPrice[Self.priceKey(event.product, event.currency)] = event.price
        }
    }

    /// Counts the payment `event` carries, if it is one of the exposure's: a transaction with a price,
    /// charged (`purchaseDate`) within the horizon after the exposure, reported within the horizon and
    /// its lag, and later than every payment already counted — every notification carries its
    /// transaction, so one charge arrives many times (a DID_RENEW, then a DID_CHANGE_RENEWAL_STATUS
    /// with the same transaction) and counts once.
    private static func pay(_ event: Event, to x: inout OpenExposure, horizon paidHorizon: Int64) {
        guard event.price != Event.absent, event.currency != Interner.null, event.purchaseDate != Event.absent,
              event.purchaseDate > x.lastPaid, event.purchaseDate <= x.time + paidHorizon,
              event.time <= x.time + paidHorizon + paymentLag else { return }
        x.lastPaid = event.purchaseDate
        if x.paidCurrency == Interner.null { x.paidCurrency = event.currency }
        guard x.paidCurrency == event.currency else {
            x.otherCurrencyPayments &+= 1
            return
        }
        x.paid += event.price
        x.payments &+= 1
        if event.expiresDate != Event.absent, event.expiresDate - event.purchaseDate > paidHorizon { x.longPayments &+= 1 }
    }

    private mutating func finalise(_ index: Int32) {
        let x = exposures[index]
        // Every count is changed in place, through the dictionaries' own accessors: a tally taken out
        // and stored back would copy its dictionaries at every customer.
        // (Static, with the clock passed: a method of the join would hold a copy of it, tallies and all,
        // for the call, and the change in place would then copy the dictionaries after all.)
        let clock = (now: now, paidHorizon: paidHorizon)
        Self.count(x, into: &tallies[x.arm, default: Tally()], clock)
        Self.countFacts(x, into: &tallies[x.arm, default: Tally()].byFacts[x.facts, default: FactOutcomes()], clock)
        if breakdown {
            Self.count(x, into: &breakdownTallies[x.arm, default: [:]][x.dimension, default: Tally()], clock)
        }
        if daily { countDays(x) }
        unlink(index, next: x.next, customerHash: x.customerHash)
        free.append(index)
    }

    /// Takes the exposure at `index` out of its customer's list of open exposures, and the customer's
    /// entry out of the table if nothing is left in it. The entry is the one with the customer's hash
    /// whose list holds this exposure.
    private mutating func unlink(_ index: Int32, next: Int32, customerHash: Int) {
        var previous: Int32 = -1
        let found = customers.index(hash: customerHash) { entry in
            previous = -1
            var cursor = entry.head
            while cursor >= 0, cursor != index {
                previous = cursor
                cursor = self.exposures[cursor].next
            }
            return cursor == index
        }
        guard let slot = found else { return }
        if previous < 0 {
            customers[slot].head = next
        } else {
            exposures.update(previous) { $0.next = next }
        }
        customers.removeIfEmpty(at: slot)
    }

    private static func count(_ x: OpenExposure, into tally: inout Tally, _ clock: (now: Int64, paidHorizon: Int64)) {
        let (now, paidHorizon) = clock
        if x.time + Self.keptWindow > now {
            tally.keptPending += 1
        } else if x.turnedOff {
            tally.notKept += 1
        } else {
            tally.kept += 1
        }
        // Taking the offer is decided when renewing is — by the renewal, EXPIRED or the renewal deadline:
        // until then a customer who has not taken it yet is pending, not a failure.
        if x.isOffered {
            tally.offered += 1
            if x.took {
                tally.took += 1
            } else if !(x.renewed || x.expired || now > x.deadline) {
                tally.tookPending += 1
            }
        }
        if x.took, x.discount != Event.absent {
            tally.discountGiven[x.discountCurrency, default: 0] += x.discount
        }
        if x.answeredLate { tally.answeredLate += 1 }
        if x.tookStoreOffer { tally.storeOffers += 1 }
        if x.renewed {
            tally.renewed += 1
            if x.renewedPrice != Event.absent, x.renewedCurrency != Interner.null {
                tally.revenueRetained[x.renewedCurrency, default: 0] += x.renewedPrice
            }
        } else if x.expired || now > x.deadline {
            tally.notRenewed += 1
        } else {
            tally.renewedPending += 1
        }
        if x.time + paidHorizon + Self.paymentLag <= now {
            tally.paidDecided += 1
            if x.paidCurrency != Interner.null {
                tally.paid[x.paidCurrency, default: PaidSums()].add(x)
            }
            tally.otherCurrencyPayments += Int(x.otherCurrencyPayments)
        } else {
            tally.paidPending += 1
        }
    }

    /// The exposure's decided outcomes under its combination of pre-exposure facts, for the adjusted
    /// differences: the same customers as the row's decided rates.
    private static func countFacts(_ x: OpenExposure, into outcomes: inout FactOutcomes, _ clock: (now: Int64, paidHorizon: Int64)) {
        let (now, paidHorizon) = clock
        if x.time + Self.keptWindow <= now {
            if x.turnedOff { outcomes.notKept += 1 } else { outcomes.kept += 1 }
        }
        if x.renewed {
            outcomes.renewed += 1
        } else if x.expired || now > x.deadline {
            outcomes.notRenewed += 1
        }
        if x.time + paidHorizon + Self.paymentLag <= now {
            outcomes.paidDecided += 1
            if x.paidCurrency != Interner.null {
                let amount = Double(x.paid)
                outcomes.paid[x.paidCurrency, default: (0, 0)].total += amount
                outcomes.paid[x.paidCurrency, default: (0, 0)].squares += amount * amount
            }
        }
    }

    /// Counts, on `day`, a customer's move from one decided state to another.
    private mutating func move(_ arm: ArmKey, day: Int64, from before: DecidedState, to after: DecidedState) {
        var counts = days[arm]?[day] ?? DayCounts()
        if before.renewed != after.renewed {
            if before.renewed == 1 { counts.renewed -= 1 } else if before.renewed == -1 { counts.notRenewed -= 1 }
            if after.renewed == 1 { counts.renewed += 1 } else if after.renewed == -1 { counts.notRenewed += 1 }
        }
        if before.took != after.took {
            if before.took == 1 { counts.took -= 1 } else if before.took == -1 { counts.notTook -= 1 }
            if after.took == 1 { counts.took += 1 } else if after.took == -1 { counts.notTook += 1 }
        }
        days[arm, default: [:]][day] = counts
    }

    private mutating func countDays(_ x: OpenExposure) {
        // Still undecided when the renewal deadline passed: decided "no" from the first instant after it.
        let state = DecidedState(x)
        if now > x.deadline, state.renewed == 0 || (x.isOffered && state.took == 0) {
            var lapsed = state
            lapsed.renewed = state.renewed == 0 ? -1 : state.renewed
            lapsed.took = x.isOffered && state.took == 0 ? -1 : state.took
            move(x.arm, day: Self.dayStart(x.deadline + 1), from: state, to: lapsed)
        }
        days[x.arm, default: [:]][Self.dayStart(x.time), default: DayCounts()].exposed += 1
        if x.isOffered { days[x.arm, default: [:]][Self.dayStart(x.time), default: DayCounts()].offered += 1 }
        let decided = x.time + Self.keptWindow
        if decided <= now {
            if x.turnedOff {
                days[x.arm, default: [:]][Self.dayStart(decided), default: DayCounts()].notKept += 1
            } else {
                days[x.arm, default: [:]][Self.dayStart(decided), default: DayCounts()].kept += 1
            }
        }
    }

    /// The start (UTC midnight) of the day holding `millis`.
    static func dayStart(_ millis: Int64) -> Int64 {
        let remainder = millis % EventTime.day
        return millis - (remainder < 0 ? remainder + EventTime.day : remainder)
    }

    static func priceKey(_ product: Int32, _ currency: Int32) -> Int64 {
        Int64(product) << 32 | Int64(currency)
    }

    /// What an event's id is mixed with so that duplicates are found per pseudonym key (0 for none).
    static func keyMix(_ keyId: Int32) -> UInt64 {
        keyId == 0 ? 0 : HashMix.mix(UInt64(UInt32(bitPattern: keyId)))
    }

    /// A 64-bit fingerprint of (customer, key, rule): SplitMix64's finaliser over the words.
    static func fingerprint(_ customer: CustomerKey, _ arm: ArmKey) -> UInt64 {
        let mix = HashMix.mix
        var h = mix(customer.a)
        h = mix(h ^ customer.b)
        h = mix(h ^ customer.c)
        h = mix(h ^ customer.d)
        h = mix(h ^ UInt64(UInt32(bitPattern: customer.keyId)))
        return mix(mix(h ^ (UInt64(UInt32(bitPattern: arm.flow)) << 32 | UInt64(UInt32(bitPattern: arm.rule)))) ^ UInt64(UInt32(bitPattern: arm.layout)))
    }
}
