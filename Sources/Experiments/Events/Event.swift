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

/// What a decision answered (`answer` in the contract).
enum Answer: UInt8 {
    case message, promotionalOffer, alternateProduct, none, refused, other

    static let names: [(String, Answer)] = [
        ("message", .message), ("promotionalOffer", .promotionalOffer), ("alternateProduct", .alternateProduct),
        ("none", .none), ("refused", .refused),
    ]

    var name: String {
        Self.names.first { $0.1 == self }?.0 ?? "other"
    }

    /// The answers that expose a customer to a rule.
    var exposes: Bool {
        self != .refused && self != .other
    }
}

/// One line of either stream, with the fields the join reads. Strings are interned numbers
/// (`Interner.null` for JSON null or absent); times are milliseconds, `Int64.min` when absent.
struct Event {
    static let absent = Int64.min

    var isOutcome = false
    var time: Int64 = absent
    var id = EventKey(high: 0, low: 0)
    var hasId = false
    var customer = CustomerKey(a: 0, b: 0, c: 0, d: 0, keyId: 0)
    var hasCustomer = false

    var answer: Answer = .other
    var flow: Int32 = 0
    var rule: Int32 = 0
    var splitGroup: Int32 = 0
    var arm: Int32 = 0
    var splitControl = false
    var message: Int32 = 0
    var locale: Int32 = 0
    var product: Int32 = 0
    var offer: Int32 = 0
    var alternateProduct: Int32 = 0

    var notificationType: Int32 = 0
    var subtype: Int32 = 0
    var effectiveDate: Int64 = absent
    var expiresDate: Int64 = absent
    var offerType: Int64 = absent
    var price: Int64 = absent
    var currency: Int32 = 0
    var autoRenewProduct: Int32 = 0
}
