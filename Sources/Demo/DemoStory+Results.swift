import Basics
import CLIKit
import Emulator
import EventStore
import Experiments
import Foundation
import HTTPServer
import Manifests
import Operations
import RealtimeServer
import Reconciler
import RetentionMessagingModels
import Views
import Runtime

extension DemoStory {
    /// At 45% against 30%, a thousand customers an arm is enough for the always-valid interval on
    /// the difference to exclude 0, and few enough to keep the step to a few seconds.
    static let simulatedCustomers = 2_000
    /// A fixed seed: every run draws the same customers, arms and reactions.
    static let simulationSeed: UInt64 = 1_790
    static let simulatedDays = 35.0
    static let controlKeeps = 0.30
    static let armKeeps = 0.45
    /// How long a simulated customer's request or notification may take: the story counts what serve
    /// answered and recorded, not how fast, and a machine busy with other work can hold one for seconds.
    static let customerTimeout = 30.0

    /// One rule of the measured split group: what it answers, as the emulator's model keys it.
    struct SplitArm {
        var rule: String
        var control: Bool
        var keys: [String]
        var answer: String
        var product: String?

        var keep: Double { control ? DemoStory.controlKeeps : DemoStory.armKeeps }
    }

    /// The first split group with a control in the published sandbox snapshot, its rules in bucket order.
    func measuredSplit() throws(CommandError) -> (flow: String, group: String, arms: [SplitArm]) {
        let rules = try published(.sandbox)?.rules ?? []
        let groups = Dictionary(grouping: rules.filter { $0.match.split != nil }) { $0.match.split?.salt ?? "" }
        guard let (group, members) = groups.sorted(by: { $0.key < $1.key })
            .first(where: { $0.value.count > 1 && $0.value.contains { $0.match.split?.control == true } }) else {
            throw CommandError("demo: the published sandbox snapshot has no split group with a control (split: {control: true}), so there is nothing to measure")
        }
        let arms = members.sorted { ($0.match.split?.lowerBucket ?? 0) < ($1.match.split?.lowerBucket ?? 0) }.map { rule in
            let response = rule.response
            let keys: [String]
            let answer: String
            switch response.kind {
            case .message:
                keys = Set(response.messageIdentifiers?.values.map { "message:" + $0 } ?? []).sorted()
                answer = "the message \(response.message ?? "")"
            case .alternateProduct:
                keys = ["alternateProduct:" + (response.productId ?? "")]
                answer = "the alternate product \(response.productId ?? "")"
            case .promotionalOffer:
                keys = ["offer:" + (response.offerIdentifier ?? "")]
                answer = "the offer \(response.offerIdentifier ?? "")"
            case .advancedCommerce:
                keys = ["advancedCommerce:" + (response.advancedCommerce?.sku ?? "")]
                answer = "the Advanced Commerce change to \(response.advancedCommerce?.sku ?? "")"
            case .none:
                keys = ["none"]
                answer = "nothing (Apple shows the default)"
            }
            let name = rule.id.split(separator: "/", maxSplits: 1).last.map(String.init) ?? rule.id
            return SplitArm(rule: name, control: rule.match.split?.control == true, keys: keys, answer: answer,
                            product: rule.match.products?.first)
        }
        let flow = rules.first { $0.match.split?.salt == group }?.id.split(separator: "/").first.map(String.init) ?? ""
        return (flow, group, arms)
    }

    /// Serve records every decision; the emulator's customers ask it, react as the model tells them,
    /// and their notifications come back to serve over the simulated month; results reads the split.
    /// Returns the pseudonym key the events were recorded under, and where they are.
    func measureSplitResults() async throws(CommandError) -> (pseudonyms: PseudonymKey, events: URL, group: String) {
        let split = try measuredSplit()
        let (set, _) = ManifestLoader.load(directory: manifestsURL, displayPath: "manifests")
        guard let product = split.arms.compactMap(\.product).first ?? products.first else {
            throw CommandError("demo: the App declares no product for the customers to subscribe to")
        }
        let locales = set?.app.products.first { $0.id == product }?.locales ?? ["en-US"]

        let events = sandboxState.deletingLastPathComponent()
        let secret = (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0 ... .max)) }.joined()
        let pseudonyms: PseudonymKey
        do { pseudonyms = try PseudonymKey(secret: secret) } catch { throw CommandError("demo: \(error.description)") }
        let recorder = EventRecorder(sink: FolderEventSink(root: events),
                                     settings: .init(writerId: "serve-demo", spool: root.appendingPathComponent("event-spool")))
        recorder.start()
        var closed = false
        // A step that fails midway still stops the recorder's thread; the demo's folder goes anyway.
        defer { if !closed { recorder.close() } }
        shell("export \(PseudonymKey.environmentVariable)=$(openssl rand -hex 32)")
        shell(serveCommand + " --events manifests/.retention-sync")
        let server = try startServe(recording: RealtimeService.Recording(recorder: recorder, pseudonyms: pseudonyms))
        defer { server.stop() }
        let realtimeURL = server.baseURL.absoluteString + RealtimeService.defaultRealtimePath(for: .sandbox)
        let pushURL = server.baseURL.absoluteString + RealtimeService.Configuration.defaultNotificationsPath
        console.print("recording decisions to manifests/.retention-sync (pseudonym key \(pseudonyms.keyId)); serving sandbox on \(realtimeURL), notifications on \(pushURL)")

        let (simulation, drawn) = try await askServe(split, product: product, locales: locales, realtimeURL: realtimeURL, pushURL: pushURL)
        try await pushNotifications(simulation)

        _ = server.drain(timeout: 5)
        let counters = await recorder.close()
        closed = true
        console.print("serve stopped (SIGTERM): events: \(counters.summary)")
        try expect(counters.dropped.isEmpty && counters.spooledSegments == 0, "every event to be stored")

        try await readResults(split, drawn: drawn, events: events)
        return (pseudonyms, events, split.group)
    }

    /// The simulated customers ask serve, each arm's answer keeping as many as the customers are
    /// told; returns the simulation and what the emulator drew for each arm.
    private func askServe(_ split: (flow: String, group: String, arms: [SplitArm]), product: String, locales: [String],
                          realtimeURL: String, pushURL: String) async throws(CommandError)
        -> (CustomerSimulation, [(arm: SplitArm, tally: AnswerTruth)]) {
        let told = split.arms.map { "\($0.rule)'s answer, \($0.answer), keeps \(Int(($0.keep * 100).rounded()))% of them" }
        console.print("the emulator's customers are told: " + told.joined(separator: "; "))
        var answers: [String: OutcomeProbabilities] = [:]
        for arm in split.arms {
            for key in arm.keys { answers[key] = OutcomeProbabilities(keep: arm.keep) }
        }
        let settings = CustomerSimulationSettings(
            customers: Self.simulatedCustomers, seed: Self.simulationSeed, products: [SimulatedProduct(productId: product)], locales: locales,
            realtimeURL: realtimeURL, pushURL: pushURL, timeout: Self.customerTimeout, model: OutcomeModel(default: OutcomeProbabilities(keep: Self.controlKeeps), answers: answers))
        let simulation: CustomerSimulation
        do { simulation = try CustomerSimulation(settings: settings, emulator: emulator) } catch {
            throw CommandError("demo: cannot start the simulated customers: \(error.description)")
        }
        shell(#"curl -X POST $EMULATOR/emulator/customers -d '{"customers":\#(Self.simulatedCustomers),"seed":\#(Self.simulationSeed),"products":["\#(product)"],"locales":[\#(locales.map { "\"\($0)\"" }.joined(separator: ","))],"realtimeURL":"\#(realtimeURL)","pushURL":"\#(pushURL)","model":{…}}'"#)
        // serve stamps each decision with the wall clock, so the customers ask (and their outcomes are dated) from it too.
        await simulation.advance(to: SystemClock().time())
        let truth = await simulation.run()
        try expect(truth.errors == 0, "serve to answer every simulated customer (\(truth.errorsByResult.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")))")
        let drawn = split.arms.map { arm in
            let tally = arm.keys.reduce(into: AnswerTruth()) { total, key in
                let one = truth.answers[key] ?? AnswerTruth()
                total.exposed += one.exposed
                total.kept += one.kept
            }
            return (arm: arm, tally: tally)
        }
        console.print("\(Self.count(truth.customers)) customers of \(product) asked serve; the emulator drew "
                      + drawn.map { "\($0.arm.rule) \(Self.count($0.tally.exposed)) shown, \(Self.count($0.tally.kept)) kept" }.joined(separator: "; "))

        return (simulation, drawn)
    }

    /// The simulated month passes; serve accepts every notification the emulator pushes.
    private func pushNotifications(_ simulation: CustomerSimulation) async throws(CommandError) {
        shell(#"curl -X POST $EMULATOR/emulator/clock -d '{"advanceSeconds":\#(Int(Self.simulatedDays * 86_400))}'"#)
        await simulation.advance(by: Self.simulatedDays * 86_400)
        let history = emulator.notificationHistory(in: .sandbox)
        let accepted = history.filter { $0.sendAttempts.last?.sendAttemptResult == SendAttemptResult.success.rawValue }.count
        console.print("\(Int(Self.simulatedDays)) days later: the emulator pushed \(Self.count(history.count)) signed notifications to serve, which accepted \(Self.count(accepted))")
        try expect(accepted == history.count && accepted > 0, "serve to accept every notification the emulator pushed")
    }

    /// results reads the events as the command does, counts what the emulator drew and names the
    /// better arms.
    private func readResults(_ split: (flow: String, group: String, arms: [SplitArm]), drawn: [(arm: SplitArm, tally: AnswerTruth)],
                             events: URL) async throws(CommandError) {
        let now = emulator.now
        let report: ResultsReport
        do {
            // As `results` computes it, so that running it afterwards prints the same report.
            report = try ResultsOperation.report(events: events, environment: .sandbox, now: now,
                                                 manifests: try? Workspace.load(directory: manifestsURL, displayPath: "manifests").0,
                                                 manifestsPath: "manifests")
        } catch {
            throw CommandError("demo: cannot read the events under \(events.path): \(error)")
        }
        shell("retention-sync results --env sandbox --events manifests/.retention-sync --as-of \(report.now)")
        console.write(report.text())

        let comparison = report.comparisons.first { $0.flow == split.flow && $0.splitGroup == split.group }
        try expect(comparison != nil, "the report to compare the arms of split group \(split.group)")
        for (arm, tally) in drawn {
            let row = report.rows.first { $0.flow == split.flow && $0.rule == arm.rule }
            try expect(row?.exposed == tally.exposed, "results to count the \(tally.exposed) customers the emulator showed \(arm.rule) (it counted \(row?.exposed ?? 0))")
        }
        let expected = split.arms.filter { !$0.control }.map(\.rule)
        let better = split.arms.map(\.rule).filter { rule in comparison?.arms.contains { $0.rule == rule && $0.kept24h.verdict == .better } == true }
        let undecided = comparison?.arms.allSatisfy { $0.kept24h.verdict == .notDistinguishableYet } == true
        try expect(better == expected || (undecided && report.text().contains("not distinguishable yet")),
                   "results to name \(expected.joined(separator: ", ")) better at keeping subscribers than \(comparison?.control ?? "the control")")
        if better == expected {
            console.print("results counted the customers the emulator showed each arm, and names \(better.joined(separator: ", ")) better at keeping subscribers than \(comparison?.control ?? ""): \(Int((Self.armKeeps * 100).rounded()))% against \(Int((Self.controlKeeps * 100).rounded()))%, as the customers were told.")
        } else {
            console.print("results counted the customers the emulator showed each arm; at this size the difference is not distinguishable yet.")
        }
    }

    /// 2000 as "2,000", as results writes counts.
    static func count(_ value: Int) -> String {
        let digits = Array(String(value))
        return String(digits.enumerated().flatMap { index, digit in
            index > 0 && (digits.count - index) % 3 == 0 ? [",", digit] : [digit]
        })
    }
}
