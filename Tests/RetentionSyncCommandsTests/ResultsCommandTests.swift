import CLIKit
import Foundation
import RetentionSyncCommands
@testable import CommandTestSupport
import Testing
import TestSupport

@Suite("retention-sync results")
struct ResultsCommandTests {
    /// One decision line of the event contract, for customer `n` in arm `rule` of the yearly-upsell split.
    private func decision(_ n: Int, rule: String, control: Bool, at time: String) -> String {
        let customer = String(repeating: String(format: "%02x", n), count: 32)
        return #"{"alternateProductId":null,"answer":"message","arm":"\#(rule)","customer":"\#(customer)","environment":"sandbox","eventId":"00000000-0000-4000-8000-\#(String(format: "%012d", n))","flow":"cancel-flow","keyId":"0badc0de","latencyMicros":800,"localeRequested":"en-US","localeServed":"en-US","messageIdentifier":"00000000-0000-5000-8000-000000000001","offerIdentifier":null,"productId":"com.example.stillpoint.monthly","requestIdentifier":"r\#(n)","rule":"\#(rule)","schema":1,"snapshot":"sha256:00","splitControl":\#(control),"splitGroup":"yearly-upsell","time":"\#(time)","type":"decision"}"#
    }

    /// Six customers exposed to each arm of the example's yearly-upsell split, beside the sandbox state.
    private func writeTwelveDecisions(_ harness: CommandHarness) throws {
        let events = harness.file("manifests/.retention-sync/events/v1/decisions/environment=sandbox/date=2026-11-20/hour=10")
        try FileManager.default.createDirectory(at: events, withIntermediateDirectories: true)
        var lines: [String] = []
        for n in 1...6 { lines.append(decision(n, rule: "upsell-yearly", control: false, at: "2026-11-20T10:0\(n):00.000Z")) }
        for n in 7...12 { lines.append(decision(n, rule: "upsell-control", control: true, at: "2026-11-20T10:1\(n - 7):00.000Z")) }
        try (lines.joined(separator: "\n") + "\n").write(to: events.appendingPathComponent("replica-a-0000000001.ndjson"),
                                                         atomically: true, encoding: .utf8)
    }

    @Test("results reads the events beside the state and reports each arm with its interval, in every format")
    func reportsArms() async throws {
        let harness = try CommandHarness()
        try writeTwelveDecisions(harness)

        let json = await harness.run(["results", "--env", "sandbox", "--format", "json", "--since", "2026-11-01"])
        #expect(json.code == .success, "\(json.stderr)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        #expect(report["formatVersion"] as? String == "2.2", "\(json.stdout.prefix(400))")
        #expect(json.stdout.contains("upsell-yearly") && json.stdout.contains("upsell-control"))

        let text = await harness.run(["results", "--env", "sandbox", "--since", "2026-11-01"])
        #expect(text.code == .success)
        #expect(text.stdout.contains("not distinguishable yet"), "\(text.stdout)")
        let markdown = await harness.run(["results", "--env", "sandbox", "--format", "markdown", "--since", "2026-11-01"])
        #expect(markdown.stdout.contains("<details>"), "\(markdown.stdout)")
    }

    @Test("results --paid-horizon sets the days payments count in, says so in the JSON, and refuses a horizon out of range")
    func paidHorizon() async throws {
        let harness = try CommandHarness()
        try writeTwelveDecisions(harness)
        let json = await harness.run(["results", "--env", "sandbox", "--format", "json", "--since", "2026-11-01", "--paid-horizon", "370"])
        #expect(json.code == .success, "\(json.stderr)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        #expect((report["method"] as? [String: Any])?["paidHorizonDays"] as? Int == 370)
        for wrong in ["0", "401"] {
            let refused = await harness.run(["results", "--env", "sandbox", "--paid-horizon", wrong])
            #expect(refused.code == .usage && refused.stderr.contains("--paid-horizon must be a whole number of days from 1 to 400"), "\(refused.stderr)")
        }
    }

    @Test("results --format html writes one page to standard output: the arms drawn, the same figures as the text, and no script")
    func writesAPage() async throws {
        let harness = try CommandHarness()
        try writeTwelveDecisions(harness)
        let arguments = ["results", "--env", "sandbox", "--since", "2026-11-01", "--as-of", "2026-11-23T00:00:00Z"]
        let html = await harness.run(arguments + ["--format", "html"])
        #expect(html.code == .success, "\(html.stderr)")
        #expect(html.stdout.hasPrefix("<!DOCTYPE html>") && html.stdout.hasSuffix("</html>\n"))
        #expect(html.stdout.contains("<svg class=\"rates\"") && html.stdout.contains("<svg class=\"exposures\""))
        #expect(html.stdout.contains("data-rule=\"upsell-yearly\"") && html.stdout.contains("data-rule=\"upsell-control\""))
        #expect(!html.stdout.contains("<script"))
        let text = await harness.run(arguments)
        let figure = try #require(text.stdout.split(separator: "\n").first { $0.contains("upsell-yearly vs upsell-control") })
        #expect(html.stdout.contains(figure.trimmingCharacters(in: .whitespaces)), "\(figure)")
        let again = await harness.run(arguments + ["--format", "html"])
        #expect(again.stdout == html.stdout)
    }

    @Test("a --since that is not a date is a usage error naming the forms it takes")
    func badSince() async {
        let harness = try? CommandHarness()
        let run = await harness?.run(["results", "--env", "sandbox", "--since", "last week"])
        #expect(run?.code == .usage)
        #expect(run?.stderr.contains("write 2026-11-01 or 2026-11-01T12:00:00Z") == true)
    }

    @Test("plan --results shows, beside a change to a split, the current results of its arms; a plan that changes no rule says so")
    func planShowsEvidence() async throws {
        let harness = try CommandHarness()
        try writeTwelveDecisions(harness)

        let first = await harness.run(["plan", "--env", "sandbox", "--format", "markdown", "--results"])
        #expect(first.code == .success, "\(first.stderr)")
        #expect(first.stdout.contains("#### Evidence: current results of the rules this change touches"), "\(first.stdout)")
        #expect(first.stdout.contains("upsell-yearly") && first.stdout.contains("upsell-control"))
        // The evidence comes after the plan, which is unchanged by it.
        let plain = await harness.run(["plan", "--env", "sandbox", "--format", "markdown"])
        #expect(first.stdout.hasPrefix(plain.stdout))

        #expect(await harness.run(["apply", "--env", "sandbox", "--auto-approve"]).code == .success)
        let settled = await harness.run(["plan", "--env", "sandbox", "--results"])
        #expect(settled.stdout.contains("Evidence: this plan changes no published rule"), "\(settled.stdout)")
    }

    @Test("plan --results in every format: JSON stays one document with the evidence as its member, the other formats add it after the plan")
    func planEvidenceInEveryFormat() async throws {
        let harness = try CommandHarness()
        try writeTwelveDecisions(harness)
        for format in ["text", "markdown", "json", "github"] {
            let plain = await harness.run(["plan", "--env", "sandbox", "--format", format])
            let with = await harness.run(["plan", "--env", "sandbox", "--format", format, "--results"])
            #expect(plain.code == .success && with.code == .success, "\(format): \(with.stderr)")
            if format == "json" {
                let document = try #require(try JSONSerialization.jsonObject(with: Data(with.stdout.utf8)) as? [String: Any],
                                            "plan --format json --results is not one JSON document: \(with.stdout.suffix(300))")
                let evidence = try #require(document["evidence"] as? [String: Any])
                #expect(evidence["status"] as? String == "results")
                let rules = try #require(evidence["rules"] as? [String])
                #expect(rules.contains { $0.hasSuffix("/upsell-yearly") })
                let results = try #require(evidence["results"] as? [String: Any])
                #expect(results["formatVersion"] as? String == "2.2")
                // Without --results the bytes are the plan's alone.
                let bare = try #require(try JSONSerialization.jsonObject(with: Data(plain.stdout.utf8)) as? [String: Any])
                #expect(bare["evidence"] == nil)
                #expect(Set(document.keys).subtracting(bare.keys) == ["evidence"])
            } else {
                #expect(with.stdout.hasPrefix(plain.stdout), "\(format): the evidence changed the plan before it")
                #expect(with.stdout.dropFirst(plain.stdout.count).contains("Evidence"), "\(format): \(with.stdout.suffix(300))")
            }
        }
        #expect(await harness.run(["apply", "--env", "sandbox", "--auto-approve"]).code == .success)
        let settled = await harness.run(["plan", "--env", "sandbox", "--format", "json", "--results"])
        let document = try #require(try JSONSerialization.jsonObject(with: Data(settled.stdout.utf8)) as? [String: Any])
        let evidence = try #require(document["evidence"] as? [String: Any])
        #expect(evidence["status"] as? String == "no_rule_changed")
        #expect((evidence["note"] as? String)?.contains("changes no published rule") == true)
    }

    @Test("plan --results in Markdown keeps every comment within --markdown-max-chars, the evidence included")
    func planEvidenceCountsAgainstTheCommentLimit() async throws {
        let harness = try CommandHarness()
        try writeTwelveDecisions(harness)
        let run = await harness.run(["plan", "--env", "sandbox", "--format", "markdown", "--results", "--markdown-max-chars", "600"])
        #expect(run.code == .success, "\(run.stderr)")
        let comments = run.stdout.components(separatedBy: "<!-- retention-sync: next comment -->")
        #expect(comments.count > 1)
        for comment in comments {
            #expect(comment.trimmingCharacters(in: .newlines).utf16.count <= 600, "a comment of \(comment.utf16.count): \(comment.prefix(200))")
        }
        #expect(run.stdout.contains("#### Evidence: current results of the rules this change touches"))
        #expect(run.stdout.contains("upsell-yearly"))
    }

    @Test("results tells the webhook once when an arm becomes distinguishable from its control")
    func distinguishableArmToldOnce() async throws {
        let receiver = try WebhookReceiver()
        defer { receiver.stop() }
        let harness = try CommandHarness()
        let decisions = harness.file("manifests/.retention-sync/events/v1/decisions/environment=sandbox/date=2026-11-20/hour=10")
        let outcomes = harness.file("manifests/.retention-sync/events/v1/outcomes/environment=sandbox/date=2026-11-20/hour=12")
        try FileManager.default.createDirectory(at: decisions, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: outcomes, withIntermediateDirectories: true)
        var decisionLines: [String] = []
        var outcomeLines: [String] = []
        // 60 customers keep after the control's message; 60 turn auto-renew off within the day after the other arm's.
        for n in 1...120 {
            let arm = n <= 60 ? "upsell-control" : "upsell-yearly"
            decisionLines.append(decision(n, rule: arm, control: n <= 60, at: "2026-11-20T10:\(String(format: "%02d", n % 60)):00.000Z"))
            if n > 60 {
                let customer = String(repeating: String(format: "%02x", n), count: 32)
                outcomeLines.append(#"{"autoRenewProductId":"com.example.stillpoint.monthly","autoRenewStatus":0,"currency":null,"customer":"\#(customer)","effectiveDate":"2026-11-20T12:00:00.000Z","environment":"sandbox","eventId":"10000000-0000-4000-8000-\#(String(format: "%012d", n))","expiresDate":null,"keyId":"0badc0de","notificationType":"DID_CHANGE_RENEWAL_STATUS","notificationUUID":"10000000-0000-4000-8000-\#(String(format: "%012d", n))","offerIdentifier":null,"offerType":null,"price":null,"productId":"com.example.stillpoint.monthly","schema":1,"source":"pull","subtype":"AUTO_RENEW_DISABLED","time":"2026-11-20T12:\#(String(format: "%02d", n % 60)):00.000Z","type":"outcome"}"#)
            }
        }
        try (decisionLines.joined(separator: "\n") + "\n").write(to: decisions.appendingPathComponent("serve-a-0000000001.ndjson"), atomically: true, encoding: .utf8)
        try (outcomeLines.joined(separator: "\n") + "\n").write(to: outcomes.appendingPathComponent("outcomes-a-0000000001.ndjson"), atomically: true, encoding: .utf8)
        #expect(await harness.run(["apply", "--env", "sandbox", "--auto-approve"]).code == .success)

        let environment = ["RETENTION_SYNC_WEBHOOK_URL": receiver.url(path: "/hooks/results").absoluteString]
        let first = await harness.run(["results", "--env", "sandbox"], environment: environment)
        let second = await harness.run(["results", "--env", "sandbox"], environment: environment)
        #expect(first.code == .success && second.code == .success, "\(first.stderr)")
        #expect(first.stdout.contains("kept at 24 h lower, −100.0 points"), "\(first.stdout)")
        #expect(receiver.received.count == 1)
        let text = try #require(receiver.received.first?.json?["text"] as? String)
        #expect(text.contains("arm upsell-yearly is distinguishably worse than upsell-control on kept at 24 h"), "\(text)")
        // In points, as results says it, never as a raw fraction.
        #expect(text.range(of: #"on kept at 24 h \(-\d+\.\d points, interval -\d+\.\d to [-+]\d+\.\d"#, options: .regularExpression) != nil, "\(text)")
    }
}

@Suite("results checks the data before anyone reads a verdict")
struct ResultsDataChecksTests {
    private func decision(_ n: Int, rule: String, control: Bool, at time: String) -> String {
        let customer = String(repeating: String(format: "%02x", n), count: 32)
        return #"{"alternateProductId":null,"answer":"message","arm":"\#(rule)","customer":"\#(customer)","environment":"sandbox","eventId":"00000000-0000-4000-8000-\#(String(format: "%012d", n))","flow":"cancel-flow","keyId":"0badc0de","latencyMicros":800,"localeRequested":"en-US","localeServed":"en-US","messageIdentifier":"00000000-0000-5000-8000-000000000001","offerIdentifier":null,"productId":"com.example.stillpoint.monthly","requestIdentifier":"r\#(n)","rule":"\#(rule)","schema":1,"snapshot":"sha256:00","splitControl":\#(control),"splitGroup":"yearly-upsell","time":"\#(time)","type":"decision"}"#
    }

    private func write(_ lines: [String], _ harness: CommandHarness, stream: String, hour: String) throws {
        let folder = harness.file("manifests/.retention-sync/events/v1/\(stream)/environment=sandbox/date=2026-11-20/hour=\(hour)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try (lines.joined(separator: "\n") + "\n").write(to: folder.appendingPathComponent("w-0000000001.ndjson"), atomically: true, encoding: .utf8)
    }

    @Test("a split configured 50/50 that exposed 60 and 20 is a sample-ratio mismatch in every format and in the webhook, told once")
    func sampleRatioMismatch() async throws {
        let receiver = try WebhookReceiver()
        defer { receiver.stop() }
        let harness = try CommandHarness()
        var lines: [String] = []
        for n in 1...80 {
            let control = n > 60
            lines.append(decision(n, rule: control ? "upsell-control" : "upsell-yearly", control: control,
                                  at: "2026-11-20T10:\(String(format: "%02d", n % 60)):00.000Z"))
        }
        try write(lines, harness, stream: "decisions", hour: "10")
        #expect(await harness.run(["apply", "--env", "sandbox", "--auto-approve"]).code == .success)

        let text = await harness.run(["results", "--env", "sandbox", "--as-of", "2026-11-22"])
        #expect(text.code == .success, "\(text.stderr)")
        #expect(text.stdout.contains("sample ratio: upsell-control 20 / upsell-yearly 60 against 50% / 50% configured"), "\(text.stdout)")
        #expect(text.stdout.contains("MISMATCH"))
        #expect(text.stdout.contains("  warning: sample-ratio mismatch"))
        let markdown = await harness.run(["results", "--env", "sandbox", "--as-of", "2026-11-22", "--format", "markdown"])
        #expect(markdown.stdout.contains(":warning: sample ratio: upsell-control 20 / upsell-yearly 60"), "\(markdown.stdout)")
        let json = await harness.run(["results", "--env", "sandbox", "--as-of", "2026-11-22", "--format", "json"])
        let report = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let group = try #require((report["comparisons"] as? [[String: Any]])?.first)
        #expect((group["sampleRatio"] as? [String: Any])?["mismatch"] as? Bool == true, "\(json.stdout)")
        #expect((report["checks"] as? [String: Any])?["configuration"] as? String == "manifests in manifests")

        let environment = ["RETENTION_SYNC_WEBHOOK_URL": receiver.url(path: "/hooks/results").absoluteString,
                           "RETENTION_SYNC_WEBHOOK_FORMAT": "json"]
        _ = await harness.run(["results", "--env", "sandbox", "--as-of", "2026-11-22"], environment: environment)
        _ = await harness.run(["results", "--env", "sandbox", "--as-of", "2026-11-22"], environment: environment)
        let told = receiver.received.compactMap { $0.json }.filter { $0["event"] as? String == "experiment_sample_ratio_mismatch" }
        #expect(told.count == 1, "\(receiver.received.count) received")
        #expect((told.first?["summary"] as? String)?.contains("split group yearly-upsell: sample-ratio mismatch") == true)
    }

    @Test("outcomes recorded under a pseudonym key no decision carries are named by results, with the secret to fix")
    func outcomeKeyWithoutDecisions() async throws {
        let harness = try CommandHarness()
        var decisions: [String] = []
        var outcomes: [String] = []
        for n in 1...20 {
            decisions.append(decision(n, rule: n % 2 == 0 ? "upsell-control" : "upsell-yearly", control: n % 2 == 0,
                                      at: "2026-11-20T10:\(String(format: "%02d", n)):00.000Z"))
            let customer = String(repeating: String(format: "%02x", n), count: 32)
            outcomes.append(#"{"autoRenewProductId":"com.example.stillpoint.monthly","autoRenewStatus":0,"currency":null,"customer":"\#(customer)","effectiveDate":"2026-11-20T12:00:00.000Z","environment":"sandbox","eventId":"10000000-0000-4000-8000-\#(String(format: "%012d", n))","expiresDate":null,"keyId":"a50fe080","notificationType":"DID_CHANGE_RENEWAL_STATUS","notificationUUID":"10000000-0000-4000-8000-\#(String(format: "%012d", n))","offerIdentifier":null,"offerType":null,"price":null,"productId":"com.example.stillpoint.monthly","schema":1,"source":"pull","subtype":"AUTO_RENEW_DISABLED","time":"2026-11-20T12:\#(String(format: "%02d", n)):00.000Z","type":"outcome"}"#)
        }
        try write(decisions, harness, stream: "decisions", hour: "10")
        try write(outcomes, harness, stream: "outcomes", hour: "12")
        let run = await harness.run(["results", "--env", "sandbox", "--as-of", "2026-11-22"])
        #expect(run.code == .success, "\(run.stderr)")
        #expect(run.stdout.contains("warning: 20 outcomes carry pseudonym key a50fe080, which no decision in the window carries (decisions carry 0badc0de)"),
                "\(run.stdout)")
        #expect(run.stdout.contains("RETENTION_SYNC_PSEUDONYM_SECRET"))
    }
}

@Suite("Review time beside the plan")
struct PlanReviewTimeTests {
    @Test("a plan whose content waits for App Review says how long review takes here and how long the content has waited")
    func planShowsReviewTime() async throws {
        let harness = try CommandHarness()
        #expect(await harness.run(["apply", "--env", "production", "--auto-approve"]).code == .success)
        let text = await harness.run(["plan", "--env", "production"])
        #expect(text.stdout.contains("Review time (production, uploads of the last "), "\(text.stdout)")
        #expect(text.stdout.contains("  waiting: "), "\(text.stdout)")
        let markdown = await harness.run(["plan", "--env", "production", "--format", "markdown"])
        #expect(markdown.stdout.contains("<details><summary>Review time (production): "), "\(markdown.stdout)")
        // JSON stays the plan alone.
        let json = await harness.run(["plan", "--env", "production", "--format", "json"])
        #expect(!json.stdout.contains("Review time"))
    }
}
