internal import COpenSSL
import Synchronization

/// ES256 verification for the few keys that sign almost every message a server checks (Apple's
/// leaf certificate signs every realtime request). ECDSA verification computes u1·G + u2·Q: OpenSSL
/// multiplies G from a built-in table, but Q from scratch, and that multiplication is most of the
/// cost. A key that has verified `buildAfter` good signatures gets a table of its own multiples, and
/// from then on its signatures are checked with two table multiplications (about 40% less CPU).
///
/// Only a good signature counts towards a table, so forged requests never make one; the caller
/// passes only keys it trusts (a leaf of a verified chain). At most `capacity` keys are followed,
/// and a key with a table gives its place up only after `idleBeforeReplacing` without use, so
/// building (about 15 ms and 150 KB a table) happens at most `capacity` times in that interval.
public final class ES256KeyTables: Sendable {
    public static let defaultCapacity = 4
    /// Building a table costs as much as the saving on several hundred verifications.
    public static let defaultBuildAfter = 256
    public static let defaultIdleBeforeReplacing: Duration = .seconds(60)

    private struct Entry {
        var point: [UInt8]
        var goodSignatures: Int
        var table: ES256KeyTable?
        var building: Bool
        var lastUsed: ContinuousClock.Instant
    }

    private let capacity: Int
    private let buildAfter: Int
    private let idleBeforeReplacing: Duration
    private let entries = Mutex<[Entry]>([])
    private let tableVerifications = Atomic<Int>(0)

    public init(capacity: Int = defaultCapacity, buildAfter: Int = defaultBuildAfter,
                idleBeforeReplacing: Duration = defaultIdleBeforeReplacing) {
        self.capacity = max(1, capacity)
        self.buildAfter = max(1, buildAfter)
        self.idleBeforeReplacing = idleBeforeReplacing
    }

    /// How many keys have a table now (for metrics and tests).
    public var tableCount: Int { entries.withLock { $0.count(where: { $0.table != nil }) } }

    /// How many signatures were checked with a table (for tests and benchmarks).
    public var tableVerificationCount: Int { tableVerifications.load(ordering: .relaxed) }

    /// True when `signature` is a valid 64-byte `r || s` ES256 signature by `key` of a message that
    /// is the prefix hashed into `prefix` followed by `rest`; exactly `key.verify`'s answer.
    public func verify(signature: [UInt8], hashedPrefix prefix: SHA256State, rest: ArraySlice<UInt8>,
                       key: ES256PublicKey) -> Bool {
        var state = prefix
        state.update(rest)
        var digest = state.finalized()
        return verify(signature: signature, digest: &digest, key: key)
    }

    /// The same over a whole message.
    public func verify(signature: [UInt8], message: [UInt8], key: ES256PublicKey) -> Bool {
        var digest = message.withUnsafeBytes { SHA256Digest($0) }
        return verify(signature: signature, digest: &digest, key: key)
    }

    func verify(signature: [UInt8], digest: inout SHA256Digest, key: ES256PublicKey) -> Bool {
        if let table = table(for: key.point) {
            tableVerifications.add(1, ordering: .relaxed)
            return table.verify(signature: signature, digest: &digest)
        }
        guard key.verify(signature: signature, digest: &digest) else { return false }
        counted(key)
        return true
    }

    private func table(for point: [UInt8]) -> ES256KeyTable? {
        entries.withLock { entries in
            guard let index = entries.firstIndex(where: { $0.table != nil && $0.point == point }) else { return nil }
            entries[index].lastUsed = .now
            return entries[index].table
        }
    }

    /// Counts a good signature by `key`, and builds its table when this one reaches `buildAfter`.
    private func counted(_ key: ES256PublicKey) {
        let now = ContinuousClock.now
        let build = entries.withLock { entries -> Bool in
            if let index = entries.firstIndex(where: { $0.point == key.point }) {
                entries[index].goodSignatures += 1
                entries[index].lastUsed = now
                guard entries[index].goodSignatures >= buildAfter, entries[index].table == nil, !entries[index].building else {
                    return false
                }
                entries[index].building = true
                return true
            }
            let entry = Entry(point: key.point, goodSignatures: 1, table: nil, building: buildAfter == 1, lastUsed: now)
            if entries.count < capacity {
                entries.append(entry)
            } else if let index = replaceable(in: entries, now: now) {
                entries[index] = entry
            } else {
                return false
            }
            return entry.building
        }
        guard build else { return }
        let table = ES256KeyTable(key)
        entries.withLock { entries in
            guard let index = entries.firstIndex(where: { $0.point == key.point }) else { return }
            entries[index].table = table
            entries[index].building = false
            // A table OpenSSL could not build is tried again only after as many good signatures, not on each one.
            if table == nil { entries[index].goodSignatures = 0 }
        }
    }

    /// The place a new key may take: the least recently used key without a table, else the least
    /// recently used table idle for `idleBeforeReplacing`; nil when every table is in use.
    private func replaceable(in entries: [Entry], now: ContinuousClock.Instant) -> Int? {
        let counting = entries.indices.filter { entries[$0].table == nil && !entries[$0].building }
        if let index = counting.min(by: { entries[$0].lastUsed < entries[$1].lastUsed }) { return index }
        let idle = entries.indices.filter { entries[$0].table != nil && now - entries[$0].lastUsed >= idleBeforeReplacing }
        return idle.min(by: { entries[$0].lastUsed < entries[$1].lastUsed })
    }
}

/// One key's table: a copy of P-256 whose generator is the key, with OpenSSL's precomputed multiples
/// of that generator, beside P-256 itself (whose generator's table is built into OpenSSL).
final class ES256KeyTable: Sendable {
    // Both groups are only read after construction; OpenSSL multiplies with a shared group safely.
    nonisolated(unsafe) private let curve: OpaquePointer
    nonisolated(unsafe) private let keyCurve: OpaquePointer
    nonisolated(unsafe) private let order: OpaquePointer
    private let idle = Mutex<[Scratch]>([])

    /// The working memory of one verification: a `BN_CTX` and two points.
    private final class Scratch: Sendable {
        nonisolated(unsafe) let context: OpaquePointer
        nonisolated(unsafe) let first: OpaquePointer
        nonisolated(unsafe) let second: OpaquePointer

        init?(curve: OpaquePointer, keyCurve: OpaquePointer) {
            guard let context = BN_CTX_new() else { return nil }
            guard let first = EC_POINT_new(curve), let second = EC_POINT_new(keyCurve) else {
                BN_CTX_free(context)
                return nil
            }
            self.context = context
            self.first = first
            self.second = second
        }

        deinit {
            EC_POINT_free(first)
            EC_POINT_free(second)
            BN_CTX_free(context)
        }
    }

    /// Nil when OpenSSL cannot build the table (out of memory); the key is then verified as before.
    init?(_ key: ES256PublicKey) {
        guard let curve = EC_GROUP_new_by_curve_name(NID_X9_62_prime256v1) else { return nil }
        guard let keyCurve = EC_GROUP_dup(curve), let context = BN_CTX_new() else {
            EC_GROUP_free(curve)
            return nil
        }
        defer { BN_CTX_free(context) }
        let point = EC_POINT_new(curve)
        defer { EC_POINT_free(point) }
        let built = point != nil
            && EC_POINT_oct2point(curve, point, key.point, key.point.count, context) == 1
            && EC_GROUP_set_generator(keyCurve, point, EC_GROUP_get0_order(curve), EC_GROUP_get0_cofactor(curve)) == 1
            && shim_EC_GROUP_precompute_mult(keyCurve, context) == 1
        guard built, let order = EC_GROUP_get0_order(curve) else {
            ERR_clear_error()
            EC_GROUP_free(keyCurve)
            EC_GROUP_free(curve)
            return nil
        }
        self.curve = curve
        self.keyCurve = keyCurve
        self.order = order
    }

    deinit {
        EC_GROUP_free(keyCurve)
        EC_GROUP_free(curve)
    }

    /// w = s⁻¹ mod n: by `P256OrderInverse` (a fraction of `BN_mod_inverse`'s time), confirmed by
    /// OpenSSL as s · w ≡ 1 (mod n); by `BN_mod_inverse` whenever that is not so. `raw` is r ‖ s.
    @inline(__always)
    private static func invert(_ s: OpaquePointer, raw: [UInt8], into w: OpaquePointer, product: OpaquePointer,
                               order: OpaquePointer, context: OpaquePointer) -> Bool {
        let inverse = raw.withUnsafeBytes { P256OrderInverse.inverse(bigEndian: UnsafeRawBufferPointer(rebasing: $0[32..<64])) }
        if let inverse, BN_bin2bn(inverse, 32, w) != nil, BN_mod_mul(product, s, w, order, context) == 1, BN_is_one(product) == 1 {
            return true
        }
        return BN_mod_inverse(w, s, order, context) != nil
    }

    /// ECDSA verification as SEC 1 §4.1.4 and OpenSSL do it: r and s in [1, n−1], w = s⁻¹,
    /// R = (e·w)·G + (r·w)·Q, valid when R is not the point at infinity and x(R) mod n = r.
    func verify(signature: [UInt8], digest: inout SHA256Digest) -> Bool {
        guard signature.count == 64 else { return false }
        let scratch = idle.withLock { $0.popLast() } ?? Scratch(curve: curve, keyCurve: keyCurve)
        guard let scratch else { return false }
        defer { idle.withLock { if $0.count < PreparedContexts.capacity { $0.append(scratch) } } }
        let context = scratch.context
        BN_CTX_start(context)
        defer {
            BN_CTX_end(context)
            ERR_clear_error()
        }
        guard let r = BN_CTX_get(context), let s = BN_CTX_get(context), let e = BN_CTX_get(context),
              let w = BN_CTX_get(context), let u1 = BN_CTX_get(context), let u2 = BN_CTX_get(context),
              let x = BN_CTX_get(context), let product = BN_CTX_get(context) else { return false }
        let read = signature.withUnsafeBufferPointer { raw in
            BN_bin2bn(raw.baseAddress, 32, r) != nil && BN_bin2bn(raw.baseAddress! + 32, 32, s) != nil
        }
        // A P-256 order is 256 bits, as long as the digest, so e is the whole digest.
        guard read, digest.withBytes({ BN_bin2bn($0.baseAddress!.assumingMemoryBound(to: UInt8.self), 32, e) }) != nil,
              BN_is_zero(r) == 0, BN_is_zero(s) == 0, BN_cmp(r, order) < 0, BN_cmp(s, order) < 0,
              Self.invert(s, raw: signature, into: w, product: product, order: order, context: context),
              BN_mod_mul(u1, e, w, order, context) == 1, BN_mod_mul(u2, r, w, order, context) == 1,
              EC_POINT_mul(curve, scratch.first, u1, nil, nil, context) == 1,
              EC_POINT_mul(keyCurve, scratch.second, u2, nil, nil, context) == 1,
              EC_POINT_add(curve, scratch.first, scratch.first, scratch.second, context) == 1,
              EC_POINT_is_at_infinity(curve, scratch.first) == 0,
              EC_POINT_get_affine_coordinates(curve, scratch.first, x, nil, context) == 1,
              BN_nnmod(x, x, order, context) == 1 else { return false }
        return BN_cmp(x, r) == 0
    }
}
