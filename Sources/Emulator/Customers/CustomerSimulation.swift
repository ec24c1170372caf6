public import Basics
import Crypto
import Foundation
import HTTPClient
import HTTPCore
import RetentionMessaging
import RetentionMessagingModels

/// The emulator plays an app's subscribers. `run()` makes the customers, produces the
/// notification of each one's current period start, asks the realtime URL what to show each of
/// them (genuine signed requests, as Apple's), draws each customer's reaction from the model and
/// schedules the notifications that follow; `advance(to:)` moves the emulator's clock and delivers
/// what came due — signed, pushed to the push URL if any, and kept in Notification History.
///
/// The summary is the truth a measurement is compared with. With the same seed (and the same
/// answers from the realtime server) it is the same every run.
public struct CustomerSimulation: Sendable {
    public let settings: CustomerSimulationSettings
    public let emulator: Emulator
    private let realtimeURL: URL
    private let pushURL: URL?
    private let appAppleId: Int64
    private let bundleId: String
    private let signer: any RealtimeRequestSigner

    /// Checks the settings against the emulator: both signers configured (`useTestChain`), an
    /// `appAppleId` and a `bundleId` from the settings or the configuration, and URLs the emulator calls.
    public init(settings: CustomerSimulationSettings, emulator: Emulator) throws(CustomerSimulationError) {
        if let problem = settings.problem { throw CustomerSimulationError(problem) }
        guard let signer = emulator.configuration.realtimeSigner, emulator.configuration.notificationSigner != nil else {
            throw CustomerSimulationError("the emulator has no signing chain for realtime requests and notifications (EmulatorConfiguration.useTestChain)")
        }
        guard let appAppleId = settings.appAppleId ?? (emulator.configuration.appAppleId != 0 ? emulator.configuration.appAppleId : nil) else {
            throw CustomerSimulationError("no appAppleId: the emulator's configuration has none, so the settings must give one")
        }
        guard let bundleId = settings.bundleId ?? emulator.configuration.bundleId, !bundleId.isEmpty else {
            throw CustomerSimulationError("no bundleId: the emulator's configuration has none, so the settings must give one")
        }
        guard let realtimeURL = URL(string: settings.realtimeURL) else { throw CustomerSimulationError("realtimeURL is not a URL") }
        if let problem = PerformanceTestRunner.targetProblem(realtimeURL) { throw CustomerSimulationError("realtimeURL: \(problem)") }
        var pushURL: URL?
        if let text = settings.pushURL {
            guard let url = URL(string: text) else { throw CustomerSimulationError("pushURL is not a URL") }
            if let problem = PerformanceTestRunner.targetProblem(url) { throw CustomerSimulationError("pushURL: \(problem)") }
            pushURL = url
        }
        self.settings = settings
        self.emulator = emulator
        self.realtimeURL = realtimeURL
        self.pushURL = pushURL
        self.appAppleId = appAppleId
        self.bundleId = bundleId
        self.signer = signer
    }

    /// Seconds the emulator's clock and the realtime endpoint's may differ before a simulation is refused.
    public static let clockTolerance: Double = 300

    /// Why customers cannot be simulated now, or nil. The realtime endpoint (serve) stamps each
    /// decision with its own clock, which the signed requests' `signedDate` follow
    /// (`EmulatorConfiguration.realtimeClock`), while the customers' notifications are dated on the
    /// emulator's clock (`now`). Once `POST /emulator/clock` moved that ahead, a customer's outcome
    /// would land days after the decision it follows, and results would count every one as kept.
    /// `POST /emulator/customers` refuses then (409) with this text; from Swift, check it before `run()`.
    public var clockProblem: String? {
        let gap = emulator.now.seconds(since: UTCTime(milliseconds: 0)) - emulator.configuration.realtimeClock.now()
        guard abs(gap) > Self.clockTolerance else { return nil }
        let amount = Self.duration(abs(gap))
        if gap > 0 {
            return "the emulator's clock is \(amount) ahead of the realtime endpoint's (POST /emulator/clock moved it): the endpoint "
                + "stamps each decision with its own clock while these customers' notifications would be dated on the emulator's, "
                + "so results would pair each decision with outcomes \(amount) later and count every customer as kept. Simulate "
                + "customers before moving the clock; for more customers later, restart the emulator (its clock starts at the real "
                + "time again, and --state keeps its content) and give results --as-of for the outcomes dated ahead"
        }
        return "the emulator's clock is \(amount) behind the realtime endpoint's: the endpoint stamps each decision with its own "
            + "clock while these customers' notifications would be dated \(amount) earlier; run the emulator on the endpoint's clock"
    }

    /// `35 days`, `5 hours`, `12 minutes`.
    static func duration(_ seconds: Double) -> String {
        if seconds >= 2 * 86_400 { return "\(Int((seconds / 86_400).rounded())) days" }
        if seconds >= 2 * 3600 { return "\(Int((seconds / 3600).rounded())) hours" }
        return "\(Int((seconds / 60).rounded())) minutes"
    }

    /// Makes the customers, delivers their period-start notifications, sends one realtime request
    /// per customer (at most `concurrency` at once), draws the outcomes and schedules what follows.
    public func run() async -> CustomerSimulationSummary {
        let start = emulator.now.milliseconds
        let customers = makeCustomers(now: start)
        emulator.schedule(customers.map(periodStartNotification))
        await emulator.advanceClock(to: emulator.now)

        let exposures = await expose(customers)
        var summary = CustomerSimulationSummary(customers: customers.count, notifications: customers.count)
        var scheduled: [ScheduledNotification] = []
        for (customer, exposure) in zip(customers, exposures) {
            switch exposure {
            case .failure(let result):
                summary.errors += 1
                summary.errorsByResult[result.rawValue, default: 0] += 1
            case .success(let exposure):
                let (truth, notifications) = outcome(customer, exposure)
                func count(_ tally: inout AnswerTruth) {
                    tally.exposed += 1
                    if truth.kept { tally.kept += 1 }
                    if truth.redeemed { tally.redeemed += 1 }
                    if truth.renewed { tally.renewed += 1 }
                }
                count(&summary.answers[exposure.answer.key, default: AnswerTruth()])
                if let rule = exposure.answer.rule { count(&summary.rules[rule, default: AnswerTruth()]) }
                count(&summary.storefronts[customer.history.storefront, default: [:]][exposure.answer.key, default: AnswerTruth()])
                scheduled += notifications
            }
        }
        summary.notifications += scheduled.count
        emulator.schedule(scheduled)
        return summary
    }

    /// Moves the emulator's clock to `date` and delivers what came due; returns how many.
    @discardableResult
    public func advance(to time: UTCTime) async -> Int { await emulator.advanceClock(to: time) }

    /// Moves the emulator's clock forward by `seconds` and delivers what came due; returns how many.
    @discardableResult
    public func advance(by seconds: Double) async -> Int { await emulator.advanceClock(by: seconds) }

    // MARK: Customers

    struct Customer {
        var originalTransactionId: String
        var product: SimulatedProduct
        var locale: String
        var periodStart: Int64
        var periodEnd: Int64
        var startsWithPurchase: Bool
        /// Seeds the customer's own generators: its draws do not depend on the order answers arrive in.
        var seed: UInt64
        var history: History
    }

    /// What Apple signs about the customer beyond their current period.
    struct History {
        var storefront: String
        var firstPurchase: Int64
        var earlierOffer: Bool
        var billingRetry: Bool
        var familyShared: Bool
    }

    /// The customer's history, drawn from a generator of their own (the simulation's draws are unchanged).
    private func history(seed: UInt64, periodStart: Int64, startsWithPurchase: Bool) -> History {
        var random = SeededGenerator(seed: seed ^ 0x4157_0A7E)
        let histories = settings.histories
        let storefront = histories.storefronts[Int.random(in: 0..<histories.storefronts.count, using: &random)]
        let days = Int64.random(in: 0...Int64(histories.maxTenureDays), using: &random)
        return History(storefront: storefront, firstPurchase: startsWithPurchase ? periodStart : periodStart - days * Self.day,
                       earlierOffer: Double.random(in: 0..<1, using: &random) < histories.earlierOffer,
                       billingRetry: Double.random(in: 0..<1, using: &random) < histories.billingRetry,
                       familyShared: Double.random(in: 0..<1, using: &random) < histories.familyShared)
    }

    private var period: Int64 { Int64(settings.periodSeconds * 1000) }

    private func makeCustomers(now: Int64) -> [Customer] {
        var random = SeededGenerator(seed: settings.seed)
        var taken: Set<String> = []
        return (0..<settings.customers).map { _ in
            var id: String
            repeat {
                id = "20000" + String((0..<11).map { _ in Character(String(Int.random(in: 0...9, using: &random))) })
            } while !taken.insert(id).inserted
            let product = settings.products[Int.random(in: 0..<settings.products.count, using: &random)]
            let locale = settings.locales[Int.random(in: 0..<settings.locales.count, using: &random)]
            // The period started up to one period ago, so it ends within one period from now.
            let elapsed = Int64.random(in: 1...period, using: &random)
            let startsWithPurchase = Double.random(in: 0..<1, using: &random) < 0.2
            let seed = random.next()
            return Customer(originalTransactionId: id, product: product, locale: locale, periodStart: now - elapsed + 1,
                            periodEnd: now - elapsed + 1 + period, startsWithPurchase: startsWithPurchase, seed: seed,
                            history: history(seed: seed, periodStart: now - elapsed + 1, startsWithPurchase: startsWithPurchase))
        }
    }

    // MARK: Realtime requests

    /// What the realtime server answered, as the model's key and what the outcome needs.
    struct Answer {
        var key: String
        var offerIdentifier: String?
        var alternateProductId: String?
        /// The rule that answered, as the realtime server named it (`X-Retention-Sync-Rule`), if it did.
        var rule: String?
    }

    enum ExposureResult {
        case success(Exposure)
        case failure(SendAttemptResult)
    }

    struct Exposure {
        var answer: Answer
        /// When the answer came (the emulator's clock), ms since 1970.
        var time: Int64
    }

    private func expose(_ customers: [Customer]) async -> [ExposureResult] {
        let transport: any HTTPTransport = emulator.configuration.realtimeTransport ?? CurlHTTPClient(configuration: .init(
            connectTimeout: settings.timeout, timeout: settings.timeout, caBundlePath: emulator.configuration.realtimeCABundlePath,
            maxConcurrentTransfers: settings.concurrency, environment: [:], userAgent: "retention-sync-emulator"))
        return await withTaskGroup(of: (Int, ExposureResult).self) { group in
            var results = [ExposureResult](repeating: .failure(.other), count: customers.count)
            var inFlight = 0
            for (index, customer) in customers.enumerated() {
                if inFlight >= settings.concurrency, let (done, result) = await group.next() {
                    results[done] = result
                    inFlight -= 1
                }
                inFlight += 1
                group.addTask { (index, await ask(customer, transport: transport)) }
            }
            for await (done, result) in group { results[done] = result }
            return results
        }
    }

    private struct SignedBody: Encodable {
        var signedPayload: String
    }

    private func ask(_ customer: Customer, transport: any HTTPTransport) async -> ExposureResult {
        let payload = DecodedRealtimeRequestBody(
            originalTransactionId: customer.originalTransactionId, appAppleId: appAppleId, productId: customer.product.productId,
            userLocale: customer.locale, requestIdentifier: UUID().uuidString.lowercased(), environment: settings.environment.appleName,
            signedDate: UTCTime(now: emulator.configuration.realtimeClock).milliseconds)
        let body: Data
        do {
            body = try CanonicalJSON.encode(SignedBody(signedPayload: try signer.sign(payload)))
        } catch {
            return .failure(.other)
        }
        let request = HTTPRequest(method: "POST", url: realtimeURL,
                                  headers: [(name: "Content-Type", value: "application/json"), (name: RealtimeResponseBody.askRuleHeader, value: "1")],
                                  body: body, connectTimeout: settings.timeout, timeout: settings.timeout)
        let response: HTTPResponse
        do throws(HTTPError) {
            response = try await transport.send(request)
        } catch {
            return .failure(PerformanceTestRunner.classify(error))
        }
        guard response.status == 200 else { return .failure(.unsuccessfulHTTPResponseCode) }
        guard var answer = Self.answer(response.body, advancedCommerceProduct: customer.product.advancedCommerce == true) else {
            return .failure(.invalidResponse)
        }
        answer.rule = response.header(RealtimeResponseBody.ruleHeader)
        return .success(Exposure(answer: answer, time: emulator.now.milliseconds))
    }

    /// The model key of a RealtimeResponseBody; nil when the body is not one. An empty body or `{}` is `none`.
    /// `advancedCommerceInfo` for a customer whose product is not an Advanced Commerce one is ignored,
    /// as Apple ignores it: the customer sees what `{}` shows, so it counts as `none`.
    static func answer(_ body: Data, advancedCommerceProduct: Bool = false) -> Answer? {
        if body.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) { return Answer(key: "none") }
        guard let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any],
              let decoded = try? JSONDecoder().decode(RealtimeResponseBody.self, from: body) else { return nil }
        if let message = decoded.message { return Answer(key: "message:" + message.messageIdentifier) }
        if let alternate = decoded.alternateProduct {
            return Answer(key: "alternateProduct:" + alternate.productId, alternateProductId: alternate.productId)
        }
        if let offer = decoded.promotionalOffer {
            // The offer's identifier is a claim of the signature Apple verifies; read without verifying.
            struct Claims: Decodable { var offerIdentifier: String? }
            let claims = (try? JWS.decode(offer.promotionalOfferSignatureV2))
                .flatMap { try? JSONDecoder().decode(Claims.self, from: Data($0.payloadJSON)) }
            let identifier = claims?.offerIdentifier ?? "unknown"
            return Answer(key: "offer:" + identifier, offerIdentifier: identifier)
        }
        if let info = decoded.advancedCommerceInfo {
            guard object.count == 1 else { return nil }
            guard advancedCommerceProduct else { return Answer(key: "none") }
            guard let sku = AdvancedCommerceData.changedSKU(info.advancedCommerceData) else { return nil }
            return Answer(key: "advancedCommerce:" + sku)
        }
        return object.isEmpty ? Answer(key: "none") : nil
    }

    // MARK: Outcomes

    struct Truth {
        var kept: Bool
        var redeemed: Bool
        var renewed: Bool
    }

    private static let hour: Int64 = 3_600_000
    private static let day: Int64 = 24 * hour

    /// Draws the customer's reaction and the notifications it produces, dated from the exposure time.
    func outcome(_ customer: Customer, _ exposure: Exposure) -> (Truth, [ScheduledNotification]) {
        var random = SeededGenerator(seed: customer.seed)
        let model = settings.histories.models[customer.history.storefront] ?? settings.model
        let probabilities = model.probabilities(rule: exposure.answer.rule, answer: exposure.answer.key)
        // Every draw is made whatever the earlier ones gave, so each probability moves only its own outcome.
        let keepDraw = Double.random(in: 0..<1, using: &random)
        let redeemDraw = Double.random(in: 0..<1, using: &random)
        let renewDraw = Double.random(in: 0..<1, using: &random)
        let delayDraw = Double.random(in: 0..<1, using: &random)
        let kept = keepDraw < probabilities.keep
        let redeemable = exposure.answer.offerIdentifier != nil || exposure.answer.alternateProductId != nil
        let redeemed = kept && redeemable && redeemDraw < probabilities.redeem
        let renewed = kept && renewDraw < probabilities.renew

        let t = exposure.time
        let end = max(customer.periodEnd, t + 2)
        let current = currentTransaction(customer)
        var notifications: [ScheduledNotification] = []
        var renewal = renewalInfo(customer, autoRenew: true, renewsTo: customer.product.productId, renewalDate: end)

        if !kept {
            let at = t + 1 + Int64(delayDraw * Double(min(Self.day, end - t - 1) - 1))
            renewal = renewalInfo(customer, autoRenew: false, renewsTo: customer.product.productId, renewalDate: nil)
            notifications.append(make(customer, at: at, .didChangeRenewalStatus, .autoRenewDisabled, transaction: current, renewal: renewal,
                                      random: &random))
        } else if redeemed, let offer = exposure.answer.offerIdentifier {
            let at = t + 1 + Int64(delayDraw * Double(min(Self.hour, (end - t) / 2)))
            var transaction = current
            transaction.transactionId = transactionId(&random)
            transaction.purchaseDate = at
            transaction.offerType = 2
            transaction.offerIdentifier = offer
            transaction.price = offerPrice(offer, of: customer.product)
            transaction.transactionReason = "PURCHASE"
            renewal.offerType = 2
            renewal.offerIdentifier = offer
            notifications.append(make(customer, at: at, .offerRedeemed, nil, transaction: transaction, renewal: renewal, random: &random))
        } else if redeemed, let alternate = exposure.answer.alternateProductId {
            let at = t + 1 + Int64(delayDraw * Double(min(Self.hour, (end - t) / 2)))
            let alternatePrice = settings.products.first { $0.productId == alternate }?.price ?? customer.product.price
            renewal.autoRenewProductId = alternate
            notifications.append(make(customer, at: at, .didChangeRenewalPref, alternatePrice > customer.product.price ? .upgrade : .downgrade,
                                      transaction: current, renewal: renewal, random: &random))
        }

        if renewed {
            let product = redeemed ? exposure.answer.alternateProductId.flatMap { id in settings.products.first { $0.productId == id } }
                ?? SimulatedProduct(productId: exposure.answer.alternateProductId ?? customer.product.productId, price: customer.product.price,
                                    currency: customer.product.currency)
                : customer.product
            let offer = redeemed ? exposure.answer.offerIdentifier : nil
            let next = TransactionPayload(
                transactionId: transactionId(&random), originalTransactionId: customer.originalTransactionId, bundleId: bundleId,
                productId: product.productId, purchaseDate: end, expiresDate: end + period, offerType: offer.map { _ in 2 },
                offerIdentifier: offer, price: offer.map { offerPrice($0, of: product) } ?? product.price, currency: product.currency,
                transactionReason: "RENEWAL", environment: settings.environment.appleName, signedDate: 0,
                storefront: customer.history.storefront, originalPurchaseDate: customer.history.firstPurchase,
                inAppOwnershipType: customer.history.familyShared ? "FAMILY_SHARED" : "PURCHASED")
            var nextRenewal = renewalInfo(customer, autoRenew: true, renewsTo: product.productId, renewalDate: end + period)
            nextRenewal.productId = product.productId
            notifications.append(make(customer, at: end, .didRenew, nil, transaction: next, renewal: nextRenewal, random: &random))
        } else {
            if kept && end - t > Self.day + 60_000 {
                // A customer who keeps past the first day but does not renew turns auto-renew off later.
                let at = t + Self.day + 1 + Int64(delayDraw * Double(end - t - Self.day - 60_000))
                renewal.autoRenewStatus = 0
                renewal.renewalDate = nil
                notifications.append(make(customer, at: at, .didChangeRenewalStatus, .autoRenewDisabled, transaction: current,
                                          renewal: renewal, random: &random))
            }
            renewal.autoRenewStatus = 0
            renewal.renewalDate = nil
            notifications.append(make(customer, at: end, .expired, .voluntary, transaction: current, renewal: renewal, status: 2,
                                      random: &random))
        }
        return (Truth(kept: kept, redeemed: redeemed, renewed: renewed), notifications)
    }

    /// The notification of the current period's start: `SUBSCRIBED`/`INITIAL_BUY` for a first
    /// purchase, else `DID_RENEW`, carrying the period's `expiresDate`.
    func periodStartNotification(_ customer: Customer) -> ScheduledNotification {
        var random = SeededGenerator(seed: customer.seed ^ 0x5EED)
        return make(customer, at: customer.periodStart, customer.startsWithPurchase ? .subscribed : .didRenew,
                    customer.startsWithPurchase ? .initialBuy : nil, transaction: currentTransaction(customer),
                    renewal: renewalInfo(customer, autoRenew: true, renewsTo: customer.product.productId, renewalDate: customer.periodEnd),
                    random: &random)
    }

    private func currentTransaction(_ customer: Customer) -> TransactionPayload {
        var random = SeededGenerator(seed: customer.seed ^ 0x7A11)
        let history = customer.history
        return TransactionPayload(
            transactionId: customer.startsWithPurchase ? customer.originalTransactionId : transactionId(&random),
            originalTransactionId: customer.originalTransactionId, bundleId: bundleId, productId: customer.product.productId,
            purchaseDate: customer.periodStart, expiresDate: customer.periodEnd, offerType: history.earlierOffer ? 2 : nil,
            offerIdentifier: history.earlierOffer ? "earlier-offer" : nil,
            price: history.earlierOffer ? Self.discounted(customer.product.price) : customer.product.price, currency: customer.product.currency,
            transactionReason: customer.startsWithPurchase ? "PURCHASE" : "RENEWAL", environment: settings.environment.appleName, signedDate: 0,
            storefront: history.storefront, originalPurchaseDate: history.firstPurchase,
            inAppOwnershipType: history.familyShared ? "FAMILY_SHARED" : "PURCHASED")
    }

    private func renewalInfo(_ customer: Customer, autoRenew: Bool, renewsTo productId: String, renewalDate: Int64?) -> RenewalInfoPayload {
        RenewalInfoPayload(originalTransactionId: customer.originalTransactionId, productId: customer.product.productId,
                           autoRenewProductId: productId, autoRenewStatus: autoRenew ? 1 : 0, renewalDate: renewalDate,
                           environment: settings.environment.appleName, signedDate: 0,
                           isInBillingRetryPeriod: customer.history.billingRetry)
    }

    private func make(_ customer: Customer, at date: Int64, _ type: NotificationType, _ subtype: NotificationSubtype?, transaction: TransactionPayload,
                      renewal: RenewalInfoPayload, status: Int = 1, random: inout SeededGenerator) -> ScheduledNotification {
        ScheduledNotification(date: date, environment: settings.environment, notificationType: type.rawValue, subtype: subtype?.rawValue,
                              notificationUUID: Self.uuid(&random), appAppleId: appAppleId, bundleId: bundleId, status: status,
                              transaction: transaction, renewal: renewal, pushURL: pushURL, pushTimeout: settings.timeout)
    }

    private func transactionId(_ random: inout SeededGenerator) -> String {
        "20000" + String((0..<11).map { _ in Character(String(Int.random(in: 0...9, using: &random))) })
    }

    /// A promotional offer's price: half, in whole cents.
    static func discounted(_ price: Int64) -> Int64 { price / 2 / 10 * 10 }

    /// What a customer pays for `offer` on `product`: the settings' `offerPrices`, else half the price.
    func offerPrice(_ offer: String, of product: SimulatedProduct) -> Int64 {
        settings.offerPrices[offer] ?? Self.discounted(product.price)
    }

    /// A version-4 UUID from the seeded generator, lowercase.
    static func uuid(_ random: inout SeededGenerator) -> String {
        var bytes = (0..<16).map { _ in UInt8.random(in: 0...255, using: &random) }
        bytes[6] = bytes[6] & 0x0F | 0x40
        bytes[8] = bytes[8] & 0x3F | 0x80
        let hex = bytes.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
        let parts = [hex.prefix(8), hex.dropFirst(8).prefix(4), hex.dropFirst(12).prefix(4), hex.dropFirst(16).prefix(4), hex.dropFirst(20)]
        return parts.joined(separator: "-")
    }

}

/// Why a customer simulation cannot start.
public struct CustomerSimulationError: Error, Sendable, Hashable, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
