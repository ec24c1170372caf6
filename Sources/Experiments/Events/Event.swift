import EventContract

/// A pseudonymous customer: the 256-bit HMAC of the contract as four words, with the key that made it
/// (pseudonyms made with different secrets are different customers, never joined).
struct CustomerKey: Hashable {
    var a: UInt64
    var b: UInt64
    var c: UInt64
    var d: UInt64
    var keyId: Int32

    /// The words are an HMAC's output, already uniform: one of them, with the key, is hash enough.
    func hash(into hasher: inout Hasher) {
        hasher.combine(a ^ UInt64(UInt32(bitPattern: keyId)))
    }
}

/// An event id as 128 bits: a UUID's own bits, or a hash of any other spelling.
struct EventKey: Hashable {
    var high: UInt64
    var low: UInt64
}

/// What a decision answered (`answer` in the contract), as the join counts it: the contract's answers
/// that say what a rule gave, and `other` for the rest (`shed`, `not_ready`, `error`, or unknown).
/// The case order is the order a report lists a rule's answers in.
enum Answer: UInt8 {
    case message, promotionalOffer, alternateProduct, advancedCommerce, none, refused, shed, notReady, error, other

    init(_ answer: DecisionAnswer) {
        switch answer {
        case .message: self = .message
        case .promotionalOffer: self = .promotionalOffer
        case .alternateProduct: self = .alternateProduct
        case .advancedCommerce: self = .advancedCommerce
        case .none: self = .none
        case .refused: self = .refused
        case .shed: self = .shed
        case .notReady: self = .notReady
        case .error: self = .error
        }
    }

    /// `{}` because serve could not decide: the customer saw App Store Connect's layer or the default message.
    var isFallback: Bool {
        self == .shed || self == .notReady || self == .error
    }

    /// The contract's spelling of each answer the join tells apart.
    static let names: [(name: [UInt8], answer: Answer)] = DecisionAnswer.allCases.compactMap { answer in
        let counted = Answer(answer)
        return counted == .other ? nil : (Array(answer.rawValue.utf8), counted)
    }

    var name: String {
        Self.names.first { $0.answer == self }.map { String(decoding: $0.name, as: UTF8.self) } ?? "other"
    }

    /// The answers that expose a customer to a rule.
    var exposes: Bool {
        self == .message || self == .promotionalOffer || self == .alternateProduct || self == .advancedCommerce || self == .none
    }
}

/// One line of either stream, with the fields the join reads. Strings are interned numbers
/// (`Interner.null` for JSON null or absent); times are milliseconds, `Int64.min` when absent.
struct Event {
    static let absent = Int64.min

    // The members are in order of size (words, then 32-bit numbers, then bytes), which leaves no
    // padding between them: an event is copied several times on its way through the join.
    var time: Int64 = absent
    var id = EventKey(high: 0, low: 0)
    var effectiveDate: Int64 = absent
    var expiresDate: Int64 = absent
    /// The outcome's transaction's `purchaseDate`: when the App Store charged `price` (a payment's identity).
    var purchaseDate: Int64 = absent
    var offerType: Int64 = absent
    var price: Int64 = absent
    /// A decision's `latencyMicros`: how long serve took to answer.
    var latencyMicros: Int64 = absent
    var customer = CustomerKey(a: 0, b: 0, c: 0, d: 0, keyId: 0)

    var flow: Int32 = 0
    var rule: Int32 = 0
    var splitGroup: Int32 = 0
    /// The group's layout when the customer was decided (0: none recorded, events before it existed).
    var splitLayout: Int32 = 0
    var arm: Int32 = 0
    var message: Int32 = 0
    var locale: Int32 = 0
    var product: Int32 = 0
    var offer: Int32 = 0
    var alternateProduct: Int32 = 0
    /// A decision's customer facts (`storefront`, `tenureBand`, `billing`, and `offerWithin90Days` as
    /// the text the breakdown shows); null when serve knew nothing.
    var storefront: Int32 = 0
    var tenureBand: Int32 = 0
    var billing: Int32 = 0
    var offerRecent: Int32 = 0
    var notificationType: Int32 = 0
    var subtype: Int32 = 0
    var currency: Int32 = 0
    var autoRenewProduct: Int32 = 0

    var isOutcome = false
    var hasId = false
    var hasCustomer = false
    var answer: Answer = .other
    var splitControl = false

    /// Renumbers every interned string: `map[n]` is the number another interner gives string `n`.
    mutating func renumber(_ map: UnsafeBufferPointer<Int32>) {
        customer.keyId = map[Int(customer.keyId)]
        arm = map[Int(arm)]
        flow = map[Int(flow)]
        rule = map[Int(rule)]
        splitGroup = map[Int(splitGroup)]
        splitLayout = map[Int(splitLayout)]
        locale = map[Int(locale)]
        message = map[Int(message)]
        offer = map[Int(offer)]
        alternateProduct = map[Int(alternateProduct)]
        product = map[Int(product)]
        autoRenewProduct = map[Int(autoRenewProduct)]
        currency = map[Int(currency)]
        notificationType = map[Int(notificationType)]
        subtype = map[Int(subtype)]
        storefront = map[Int(storefront)]
        tenureBand = map[Int(tenureBand)]
        billing = map[Int(billing)]
        offerRecent = map[Int(offerRecent)]
    }
}
