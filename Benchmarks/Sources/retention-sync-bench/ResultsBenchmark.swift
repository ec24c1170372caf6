import Basics
import EventContract
import Experiments
import Foundation
import EventStore
import Views
import RetentionMessagingModels
import StateStore

/// `results` over a generated event store: by default 10 million decisions and about 3 million outcomes
/// over 180 days (1.25 million customers, eight decisions each, outcomes for renewals, cancellations
/// and offers), written as the event contract lays them out into a temporary folder, then one report
/// timed. Peak memory is the process's VmHWM, reset after generating so it measures the report alone.
/// `--vs-duckdb` then runs the manual's DuckDB query on the same files, and `--vs-spark` that and the
/// manual's Spark SQL on a local Spark session (see `SQLEngineComparison`). `--segments-per-hour N`
/// writes each hour as N segments, as serve replicas flushing every second do; `--compact` then runs
/// `events compact` over the store and measures everything again on the merged segments.
@Sendable func resultsBenchmark(_ arguments: [String]) async throws {
    func value(_ name: String) -> String? {
        arguments.firstIndex(of: name).flatMap { $0 + 1 < arguments.count ? arguments[$0 + 1] : nil }
    }
    let customers = value("--customers").flatMap(Int.init) ?? 1_250_000
    let keep = arguments.contains("--keep")
    let root: URL
    var generated = false
    if let existing = value("--root") {
        root = URL(fileURLWithPath: existing)
    } else {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("retention-sync-bench-results-\(UUID().uuidString)")
        print("results: generating \(customers) customers × 8 decisions into \(root.path)")
        let started = DispatchTime.now().uptimeNanoseconds
        var generator = ResultsEventGenerator(root: root, customers: customers)
        generator.segmentsPerHour = max(1, value("--segments-per-hour").flatMap(Int.init) ?? 1)
        try generator.run()
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
        print(String(format: "  generated %d decisions and %d outcomes (%.1f GB) in %.1f s", generator.decisions, generator.outcomes,
                     Double(generator.bytes) / 1e9, seconds))
        generated = true
    }
    defer {
        if generated && !keep { try? FileManager.default.removeItem(at: root) }
    }
    try await measureResults(root: root, arguments: arguments)
    if let by = value("--by") {
        for name in by.split(separator: ",") {
            guard let breakdown = ResultsBreakdown(rawValue: String(name)) else {
                print("--by \(name): not one of \(ResultsBreakdown.allCases.map(\.rawValue).joined(separator: ", "))")
                continue
            }
            try measureBreakdown(root: root, breakdown: breakdown, arguments: arguments)
        }
    }
    guard arguments.contains("--compact") else { return }
    let now = ResultsEventGenerator.start + 240 * ResultsEventGenerator.day
    let started = DispatchTime.now().uptimeNanoseconds
    let summary = try await EventMaintenance.compact(FolderObjectStore(root: root), environment: "production", now: now)
    print(String(format: "events compact: %d partitions, %d segments merged into %d, in %.1f s; measuring again:", summary.partitions,
                 summary.segmentsRead, summary.segmentsWritten, Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9))
    try await measureResults(root: root, arguments: arguments)
}

/// `results --by WHAT` over the store, timed: the rows per segment and the segment comparisons.
private func measureBreakdown(root: URL, breakdown: ResultsBreakdown, arguments: [String]) throws {
    let readers = arguments.firstIndex(of: "--readers").flatMap { $0 + 1 < arguments.count ? Int(arguments[$0 + 1]) : nil }
        ?? ResultsReport.defaultReaders
    let reset = resetPeakRSS()
    let started = DispatchTime.now().uptimeNanoseconds
    let processor = processorSeconds()
    let now = UTCTime(milliseconds: ResultsEventGenerator.start + 240 * 86_400_000)
    let report = try ResultsReport.compute(source: FolderEventSource(root: root), environment: "production", now: now,
                                           breakdown: breakdown, readers: readers)
    let seconds = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
    let segments = report.segmentComparisons ?? []
    print(String(format: "results --by %@: %.1f s (processor %.1f s) for %d decisions; %d breakdown rows, %d segment comparisons (%d arms); peak RSS %@",
                 breakdown.rawValue, seconds, processorSeconds() - processor, report.events.decisions, report.breakdownRows?.count ?? 0, segments.count,
                 segments.reduce(0) { $0 + $1.arms.count }, peakRSS() + (reset ? "" : " (of the whole run)")))
}

/// One report over the store, timed, then the SQL engines when asked.
private func measureResults(root: URL, arguments: [String]) async throws {
    func value(_ name: String) -> String? {
        arguments.firstIndex(of: name).flatMap { $0 + 1 < arguments.count ? arguments[$0 + 1] : nil }
    }
    let reset = resetPeakRSS()
    let started = DispatchTime.now().uptimeNanoseconds
    let processor = processorSeconds()
    let now = UTCTime(milliseconds: ResultsEventGenerator.start + 240 * 86_400_000)
    let readers = value("--readers").flatMap(Int.init) ?? ResultsReport.defaultReaders
    let report = try ResultsReport.compute(source: FolderEventSource(root: root), environment: "production", now: now, readers: readers)
    let seconds = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
    let processorUsed = processorSeconds() - processor
    print("  reading threads: \(readers)\(readers == 0 ? " (segments parsed on the joining thread, one after another)" : "")")
    let lines = report.events.decisions + report.events.outcomes + report.events.duplicates
    print(String(format: "  report: %.1f s (processor %.1f s) for %d decisions and %d outcomes in %d segments (%.0f lines/s)", seconds,
                 processorUsed, report.events.decisions, report.events.outcomes, report.events.segments, Double(lines) / seconds))
    print("  peak RSS during the report: \(peakRSS())\(reset ? "" : " (of the whole run: /proc/self/clear_refs could not reset it)")")
    print("  (targets: under 20 s and under 300 MB)")
    print(report.text().split(separator: "\n").prefix(40).map { "  | " + $0 }.joined(separator: "\n"))

    let vsSpark = arguments.contains("--vs-spark")
    guard vsSpark || arguments.contains("--vs-duckdb") else { return }
    let python = value("--python").map { URL(fileURLWithPath: $0) }
        ?? SQLEngineComparison.repository.appendingPathComponent(".build/tools/bin/python")
    let engines = SQLEngineComparison(root: root, now: ResultsEventGenerator.start + 240 * ResultsEventGenerator.day, report: report,
                                      python: python, memoryGB: value("--sql-memory").flatMap(Int.init) ?? 4)
    print("the manual's SQL (docs/results-sql.md) on the same files, each engine in its own process (\(python.path)):")
    print("  results: \(String(format: "%.1f s", seconds)), peak RSS \(peakRSS())")
    guard FileManager.default.isExecutableFile(atPath: python.path) else {
        print("  \(python.path) is missing: bash .ci/setup --test installs duckdb and pyspark there (or pass --python)")
        return
    }
    if engines.has("duckdb") {
        print("  " + (try engines.duckDB()))
    } else {
        print("  DuckDB: not importable in \(python.path) (bash .ci/setup --test installs it)")
    }
    guard vsSpark else { return }
    if engines.has("pyspark") {
        print("  " + (try engines.spark()))
    } else {
        print("  Spark: pyspark is not importable in \(python.path) (bash .ci/setup --test installs it, and Java 17)")
    }
}

/// Writes NDJSON segments in time order with a bounded look-ahead: customers arrive in exposure order,
/// their events (from 29 days before exposure to the end of the period after it) wait in hour buckets,
/// and each hour is written once no customer still to come can add to it.
struct ResultsEventGenerator {
    static let start: Int64 = 1_790_812_800_000 // 2026-10-01T00:00:00Z
    static let hour: Int64 = 3_600_000
    static let day: Int64 = 86_400_000
    static let days: Int64 = 180

    let root: URL
    let customers: Int
    private(set) var decisions = 0
    private(set) var outcomes = 0
    private(set) var bytes = 0
    private var random: UInt64 = 0x5EED
    private var counter: UInt64 = 0
    private var buckets: [Int64: [Record]] = [:]
    /// Segments each hour is written as (serve writes one per flush per replica).
    var segmentsPerHour = 1

    init(root: URL, customers: Int) {
        self.root = root
        self.customers = customers
    }

    enum Kind: UInt8 {
        case decision, renewal, disabled, expired, offerRedeemed
    }

    struct Record {
        var time: Int64
        var effective: Int64
        var expires: Int64
        var customer: UInt32
        var kind: Kind
        var rule: UInt8
    }

    static let rules: [(flow: String, rule: String, answer: DecisionAnswer, group: String?, control: Bool, offer: String?, keep: Double)] = [
        ("cancel-flow", "keep-message", .message, "save-offer", true, nil, 0.62),
        ("cancel-flow", "half-price", .promotionalOffer, "save-offer", false, "half-price-3-months", 0.68),
        ("cancel-flow", "holdout", DecisionAnswer.none, "save-offer", false, nil, 0.58),
        ("billing-issue", "update-payment", .message, nil, false, nil, 0.7),
    ]

    private mutating func next() -> UInt64 {
        random &+= 0x9E37_79B9_7F4A_7C15
        var z = random
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    private mutating func uniform() -> Double { Double(next() >> 11) * 0x1p-53 }
    private mutating func below(_ bound: Int64) -> Int64 { Int64(next() % UInt64(bound)) }

    mutating func run() throws {
        let span = Self.days * Self.day
        var customer = 0
        var flushed = Self.start - 40 * Self.day
        while customer < customers || !buckets.isEmpty {
            // Customers arrive evenly; each one's events reach back 29 days, so hours up to 30 days before
            // the next arrival are complete.
            let arrival = customer < customers ? Self.start + span * Int64(customer) / Int64(customers) : Int64.max
            while flushed + Self.hour <= arrival - 30 * Self.day, flushed < Self.start + span + 80 * Self.day {
                try flush(hour: flushed)
                flushed += Self.hour
            }
            if customer >= customers {
                if flushed >= Self.start + span + 80 * Self.day { break }
                continue
            }
            schedule(customer: UInt32(customer), arrival: arrival + below(span / Int64(customers) + 1))
            customer += 1
        }
    }

    private mutating func add(_ record: Record) {
        buckets[record.time - record.time % Self.hour, default: []].append(record)
    }

    private mutating func schedule(customer: UInt32, arrival: Int64) {
        let ruleIndex = UInt8(customer % 3)
        let rule = Self.rules[Int(ruleIndex)]
        let renewedAt = arrival - Self.day - below(28 * Self.day)
        let expiry = renewedAt + 30 * Self.day
        add(Record(time: renewedAt + 300_000, effective: renewedAt, expires: expiry, customer: customer, kind: .renewal, rule: 0))
        add(Record(time: arrival, effective: 0, expires: 0, customer: customer, kind: .decision, rule: ruleIndex))
        for visit in 1 ..< 8 {
            // Returning customers see the cancel flow again; one visit in eight is a billing issue.
            let other: UInt8 = visit == 7 ? 3 : ruleIndex
            add(Record(time: arrival + 60_000 + below(25 * Self.day), effective: 0, expires: 0, customer: customer, kind: .decision, rule: other))
        }
        if uniform() >= rule.keep {
            add(Record(time: arrival + 1 + below(24 * Self.hour - 1), effective: 0, expires: expiry, customer: customer, kind: .disabled, rule: 0))
            add(Record(time: expiry + 60_000, effective: 0, expires: expiry, customer: customer, kind: .expired, rule: 0))
            return
        }
        if rule.offer != nil, uniform() < 0.3 {
            add(Record(time: arrival + 60_000 + below(Self.hour), effective: arrival, expires: expiry, customer: customer, kind: .offerRedeemed, rule: ruleIndex))
        }
        if uniform() < 0.85 {
            add(Record(time: expiry + 300_000, effective: expiry, expires: expiry + 30 * Self.day, customer: customer, kind: .renewal, rule: 0))
        }
    }

    private mutating func flush(hour: Int64) throws {
        guard var records = buckets.removeValue(forKey: hour) else { return }
        records.sort { $0.time < $1.time }
        var decisionLines: [UInt8] = []
        var outcomeLines: [UInt8] = []
        decisionLines.reserveCapacity(records.count * 600)
        outcomeLines.reserveCapacity(records.count * 200)
        for record in records {
            if record.kind == .decision {
                decisions += 1
                appendDecision(record, to: &decisionLines)
            } else {
                outcomes += 1
                appendOutcome(record, to: &outcomeLines)
            }
        }
        try write(decisionLines, stream: .decisions, hour: hour)
        try write(outcomeLines, stream: .outcomes, hour: hour)
    }

    private mutating func write(_ lines: [UInt8], stream: EventStream, hour: Int64) throws {
        guard !lines.isEmpty else { return }
        let time = Self.format(hour)
        let folder = root.appendingPathComponent("events/v1/\(stream.rawValue)/environment=production/date=\(time.prefix(10))/hour=\(time.dropFirst(11).prefix(2))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        bytes += lines.count
        guard segmentsPerHour > 1 else {
            try Data(lines).write(to: folder.appendingPathComponent("bench-a1b2-0000000001.ndjson"))
            return
        }
        // Line by line, in turn, into the hour's segments: each holds a share of the hour, as a flush does.
        var parts = [[UInt8]](repeating: [], count: segmentsPerHour)
        var part = 0
        for line in lines.split(separator: 0x0A) {
            parts[part] += line
            parts[part].append(0x0A)
            part = (part + 1) % segmentsPerHour
        }
        for (index, bytes) in parts.enumerated() where !bytes.isEmpty {
            try Data(bytes).write(to: folder.appendingPathComponent("serve-a1b2-\(String(format: "%010d", index + 1)).ndjson"))
        }
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    private static func appendHex(_ value: UInt64, digits: Int, to out: inout [UInt8]) {
        var shift = (digits - 1) * 4
        while shift >= 0 {
            out.append(hexDigits[Int((value >> UInt64(shift)) & 0xF)])
            shift -= 4
        }
    }

    private static func mix(_ value: UInt64) -> UInt64 {
        var z = value &+ 0x9E37_79B9_7F4A_7C15
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    private static func appendCustomer(_ customer: UInt32, to out: inout [UInt8]) {
        var word = UInt64(customer) &* 0x2545_F491_4F6C_DD1D
        for _ in 0 ..< 4 {
            word = mix(word)
            appendHex(word, digits: 16, to: &out)
        }
    }

    private mutating func appendUUID(to out: inout [UInt8]) {
        counter += 1
        let high = Self.mix(counter)
        let low = Self.mix(counter ^ 0xDEAD_BEEF)
        Self.appendHex(high >> 32, digits: 8, to: &out)
        out.append(UInt8(ascii: "-"))
        Self.appendHex(high >> 16 & 0xFFFF, digits: 4, to: &out)
        out.append(UInt8(ascii: "-"))
        Self.appendHex(0x4000 | high & 0x0FFF, digits: 4, to: &out)
        out.append(UInt8(ascii: "-"))
        Self.appendHex(0x8000 | low >> 48 & 0x3FFF, digits: 4, to: &out)
        out.append(UInt8(ascii: "-"))
        Self.appendHex(low, digits: 12, to: &out)
    }

    static func format(_ millis: Int64) -> String {
        EventTime.format(millis)
    }

    /// The save-offer group's arms take even thirds of the buckets, as serve records the layout.
    private static let layout = "keep-message*:0-3334,half-price:3334-6667,holdout:6667-10000"
    private static let snapshot = "sha256:9f2c5e0b7a1d4c3e8f6a2b0d9c7e5f3a1b8d6c4e2f0a9b7c5d3e1f8a6b4c2d0e"
    private static let product = "com.example.stillpoint.monthly"

    private static func customer(_ customer: UInt32) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(64)
        appendCustomer(customer, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    private mutating func nextUUID() -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(36)
        appendUUID(to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    static let locales = ["en-GB", "en-US", "de-DE", "fr-FR", "ja", "es-ES", "it-IT", "pt-BR"]
    static let storefronts = ["GBR", "USA", "DEU", "FRA", "JPN", "ESP", "ITA", "BRA", "CAN", "AUS", "NLD", "SWE"]
    static let tenureBands = ["0-1m", "1-3m", "3-12m", "12m+"]

    /// What serve knew of a customer, the same at each of their decisions: one in ten unknown, the
    /// others a storefront of twelve, a tenure band, a recent offer or not, a billing state.
    static func known(_ customer: UInt32, at time: Int64) -> KnownFacts {
        let draw = mix(UInt64(customer) &* 31 &+ 11)
        guard draw % 10 != 0 else {
            return KnownFacts(source: .unknown, asOf: nil, storefront: nil, tenureBand: nil, offerWithin90Days: nil, billing: nil)
        }
        let billing: BillingState = draw % 23 == 0 ? .retry : draw % 29 == 0 ? .grace : BillingState.none
        return KnownFacts(source: .table, asOf: time - day, storefront: storefronts[Int((draw >> 8) % UInt64(storefronts.count))],
                          tenureBand: tenureBands[Int((draw >> 16) % 4)], offerWithin90Days: (draw >> 24) % 5 == 0, billing: billing)
    }

    private static func messageIdentifier(rule: UInt8) -> String {
        var bytes: [UInt8] = []
        appendHex(mix(UInt64(rule)), digits: 8, to: &bytes)
        bytes.append(contentsOf: "-1111-4222-8333-".utf8)
        appendHex(mix(UInt64(rule) + 7), digits: 12, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// A decision line as serve writes it: through the event store's decision writer.
    private mutating func appendDecision(_ record: Record, to out: inout [UInt8]) {
        let rule = Self.rules[Int(record.rule)]
        let eventId = nextUUID()
        let locale = Self.locales[Int(Self.mix(UInt64(record.customer) &+ 3) % UInt64(Self.locales.count))]
        var facts = DecisionFacts(time: record.time, environment: "production", requestIdentifier: nextUUID(), customer: Self.customer(record.customer),
                                  keyId: "0badc0de", productId: Self.product, localeRequested: locale, localeServed: locale, flow: rule.flow,
                                  rule: rule.rule, splitGroup: rule.group, splitControl: rule.control, answer: rule.answer,
                                  messageIdentifier: rule.answer == .message || rule.answer == .promotionalOffer ? Self.messageIdentifier(rule: record.rule) : nil,
                                  offerIdentifier: rule.offer, alternateProductId: nil, snapshot: Self.snapshot, latencyMicros: 600 + record.time % 500)
        facts.splitLayout = rule.group == nil ? nil : Self.layout
        facts.known = Self.known(record.customer, at: record.time)
        out.append(contentsOf: facts.record(eventId: eventId).line)
        out.append(0x0A)
    }

    /// An outcome line as serve and `outcomes pull` write it: through the event store's outcome writer.
    private mutating func appendOutcome(_ record: Record, to out: inout [UInt8]) {
        let (type, subtype): (NotificationType, NotificationSubtype?) = switch record.kind {
        case .renewal: (.didRenew, nil)
        case .disabled: (.didChangeRenewalStatus, .autoRenewDisabled)
        case .expired: (.expired, .voluntary)
        case .offerRedeemed, .decision: (.offerRedeemed, nil)
        }
        let priced = record.kind == .renewal || record.kind == .offerRedeemed
        let offer = record.kind == .offerRedeemed ? Self.rules[Int(record.rule)].offer : nil
        var facts = OutcomeFacts(time: record.time, environment: "production", notificationUUID: nextUUID(), notificationType: type.rawValue,
                                 subtype: subtype?.rawValue, customer: Self.customer(record.customer), keyId: "0badc0de", productId: Self.product,
                                 autoRenewProductId: Self.product, autoRenewStatus: record.kind == .disabled || record.kind == .expired ? 0 : 1,
                                 offerType: offer == nil ? nil : 2, offerIdentifier: offer, price: offer == nil ? (priced ? 9990 : nil) : 4990,
                                 currency: priced ? "USD" : nil, effectiveDate: record.effective == 0 ? record.time : record.effective,
                                 expiresDate: record.expires, source: .pull)
        // The charge: a renewal on its renewal date, a redeemed offer a second before its notification.
        if priced { facts.purchaseDate = record.kind == .renewal ? record.effective : record.time - 1000 }
        out.append(contentsOf: facts.record().line)
        out.append(0x0A)
    }
}

/// Resets VmHWM to the current RSS (Linux: writing 5 to clear_refs), so the figure covers what follows.
/// Resets the process's peak resident set to what it holds now, after handing the memory earlier
/// reports freed back to the system (glibc keeps it otherwise), so each report is measured as if it
/// ran alone, as `retention-sync results` does.
private func resetPeakRSS() -> Bool {
    #if os(Linux)
    // malloc_trim is glibc's own (<malloc.h>, which the Glibc module leaves out): looked up by name.
    if let trim = dlsym(nil, "malloc_trim") {
        _ = unsafeBitCast(trim, to: (@convention(c) (Int) -> Int32).self)(0)
    }
    #endif
    guard let handle = FileHandle(forWritingAtPath: "/proc/self/clear_refs") else { return false }
    defer { try? handle.close() }
    return (try? handle.write(contentsOf: Data("5".utf8))) != nil
}

/// Processor time the process has used, user and system, in seconds.
func processorSeconds() -> Double {
    let usage = processUsage()
    return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
}

private func peakRSS() -> String {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
          let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }) else { return "unknown" }
    let kilobytes = Double(line.split(separator: " ").dropFirst().first.map(String.init) ?? "") ?? 0
    return String(format: "%.1f MB (VmHWM)", kilobytes / 1024)
}
