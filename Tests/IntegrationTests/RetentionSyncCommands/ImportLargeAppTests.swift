import Basics
@testable import CLIKit
import Emulator
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import HTTPClient
import HTTPCore
import RetentionMessagingModels
import Synchronization
@testable import CommandTestSupport
import Testing
import TestSupport

/// Adopting an App a vendor or a script ran for years: 2,000 messages (Apple's cap), hundreds of
/// defaults. The import keeps within Apple's rate limits, says how long that takes before it starts,
/// shows progress, and a killed import leaves nothing half-written and completes when run again.
@Suite("retention-sync import of a large App", .serialized)
struct ImportLargeAppTests {
    static let messageCount = 2_000

    /// A UUID per index, version 4 and variant 8, whose first 8 hex digits are the index.
    static func identifier(_ index: Int) -> String {
        String(format: "%08x-1111-4222-8333-%012x", index, index)
    }

    /// An App with `products` × `locales` declared pairs and a state store in sandbox.
    static func writeApp(_ harness: CommandHarness, products: Int, locales: Int) throws -> [(product: String, locale: String)] {
        let directory = try harness.clearManifests()
        let codes = Array(AppStoreLocaleCodes.established.prefix(locales))
        let ids = (1...products).map { "com.example.stillpoint.plan\($0)" }
        var text = """
            apiVersion: retention-sync/v1
            kind: App
            bundleId: com.example.stillpoint
            environments:
              sandbox: { stateStore: .retention-sync/sandbox-state.json }
            products:

            """
        for id in ids { text += "  - { id: \(id), locales: [\(codes.joined(separator: ", "))] }\n" }
        try text.write(to: directory.appendingPathComponent("app.yaml"), atomically: true, encoding: .utf8)
        return ids.flatMap { id in codes.map { (id, $0) } }
    }

    static func state(_ index: Int) -> String {
        index % 97 == 96 ? "REJECTED" : index % 10 == 9 ? "PENDING" : "APPROVED"
    }

    /// 2,000 messages (every tenth still PENDING, every 97th REJECTED) and a default for every
    /// pair, each an approved message of its own.
    static func seedJSON(pairs: [(product: String, locale: String)]) -> String {
        let messages = (0..<messageCount).map { index -> String in
            #"{"identifier":"\#(identifier(index))","state":"\#(state(index))"}"#
        }
        let approved = (0..<messageCount).filter { state($0) == "APPROVED" }
        let defaults = zip(pairs, approved).map { pair, index in
            #"{"productId":"\#(pair.product)","locale":"\#(pair.locale)","messageIdentifier":"\#(identifier(index))"}"#
        }
        return #"{"messages":[\#(messages.joined(separator: ","))],"defaults":[\#(defaults.joined(separator: ","))]}"#
    }

    static func importedFiles(_ harness: CommandHarness) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: harness.file("manifests").path)
            .filter { $0.hasPrefix("imported") || $0.hasSuffix(NewFile.partialSuffix) }.sorted()
    }

    static func occurrences(of needle: String, in text: String) -> Int { text.components(separatedBy: needle).count - 1 }

    @Test("importing an App with 2,000 messages and 400 defaults keeps to Apple's sandbox budget: 403 calls as estimated, paced after the first 360, progress at each tenth")
    func twoThousandMessagesWithinRateLimits() async throws {
        let harness = try CommandHarness()
        let pairs = try Self.writeApp(harness, products: 20, locales: 20)
        let seed = HTTPRequest(method: "POST", url: URL(string: "http://127.0.0.1/emulator/seed")!,
                               headers: [(name: "Content-Type", value: "application/json")], body: Data(Self.seedJSON(pairs: pairs).utf8))
        #expect(await harness.emulator.handle(seed, environment: .sandbox)?.status == 200)
        let refusals = Mutex(0)
        // Paced waits take no real time on the virtual clock: a request whose task is descheduled
        // between signing and arriving can find Apple's clock past its token, and is sent again.
        let expired = Mutex(0)
        harness.emulator.onLog { line in
            if line.contains(" → 429") { refusals.withLock { $0 += 1 } }
            if line.hasSuffix(" → 401 (token expired)") { expired.withLock { $0 += 1 } }
        }
        let requestsBefore = harness.emulator.requestCount(in: .sandbox)
        let started = harness.clock.now()

        let run = await harness.run(["import", "--env", "sandbox"])
        #expect(run.code == .success, "\(run.stdout)\(run.stderr)")
        // Said before the first call: 2 lists + 400 defaults + the realtime URL, against sandbox's 360 an
        // hour (0.1/s): the 43 calls past the budget take at least 430 s.
        #expect(run.stdout.hasPrefix("Importing sandbox of com.example.stillpoint: about 403 calls (the message and image lists, 400 defaults, "
                                     + "the realtime URL) before anything is written; Apple allows 360 an hour in sandbox, so after the first "
                                     + "360 it paces itself at 0.1 a second: at least 8 min.\n"), "\(run.stdout)")
        #expect(run.stdout.contains("\nRead in 403 calls.\n"))
        let resent = expired.withLock { $0 }
        #expect(harness.emulator.requestCount(in: .sandbox) - requestsBefore - resent == 403, "the estimate is the count")
        // The harness's client gives up on the first 429: none came, and Apple's clock moved as the budget says.
        #expect(refusals.withLock { $0 } == 0)
        let elapsed = harness.clock.now() - started
        #expect(elapsed >= 430 && elapsed < 440 + 10 * Double(resent), "\(elapsed) s on Apple's clock")

        let progress = run.stderr.split(separator: "\n").filter { $0.hasPrefix("  … importing sandbox: ") }
        #expect(progress == [41, 81, 121, 162, 202, 242, 283, 323, 363].enumerated().map { tenth, count in
            "  … importing sandbox: \(count) of 403 calls (\((tenth + 1) * 10)%)"
        }, "\(run.stderr)")

        #expect(try Self.importedFiles(harness) == ["imported-sandbox.yaml"])
        let text = try String(contentsOf: harness.file("manifests/imported-sandbox.yaml"), encoding: .utf8)
        #expect(Self.occurrences(of: "kind: ExternalMessage\n", in: text) == Self.messageCount)
        #expect(Self.occurrences(of: "\n  - { products: [", in: text) == 400)
        #expect(Self.occurrences(of: "PENDING at Apple", in: text) == 198)
        #expect(Self.occurrences(of: "REJECTED at Apple", in: text) == 20)

        let validate = await harness.run(["validate"])
        #expect(validate.code == .success, "\(validate.stdout)\(validate.stderr)")
        let plan = await harness.run(["plan", "--env", "sandbox"])
        #expect(plan.stdout.contains("No changes. sandbox matches the manifests."), "\(plan.stdout)\(plan.stderr.suffix(3000))")
        #expect(refusals.withLock { $0 } == 0, "the plan after the import waited for the budget too")
    }

    /// Runs `retention-sync ARGS` against the emulator process until it ends.
    static func finished(_ arguments: [String], in harness: CommandHarness, name: String) async throws -> (status: Int32?, output: String, errors: String) {
        let child = try ChildProcess(arguments, in: harness.root, environment: ApplySignalTests.environment, name: name)
        let status = await child.finish(within: 180)
        return (status, String(decoding: child.output, as: UTF8.self), child.errors)
    }

    /// Starts an import of 2,000 messages and 60 defaults from an emulator process whose every
    /// answer takes 0.5 s, and sends `signal` once it says it is a tenth of the way.
    static func killedImport(_ signal: Int32, harness: CommandHarness) async throws -> (EmulatorProcess, pid: Int32, status: Int32?, errors: String) {
        let pairs = try writeApp(harness, products: 6, locales: 10)
        let emulator = try await EmulatorProcess.start(in: harness.root, environment: ApplySignalTests.environment, name: "emulator",
                                                       arguments: ["--latency", "0.5"])
        let admin = CurlHTTPClient(configuration: .init(environment: [:]))
        let seeded = try await admin.send(HTTPRequest(method: "POST", url: URL(string: "\(emulator.endpoint)/sandbox/emulator/seed?bundleId=com.example.stillpoint")!,
                                                      headers: [(name: "Content-Type", value: "application/json")],
                                                      body: Data(seedJSON(pairs: pairs).utf8)))
        #expect(seeded.status == 200, "\(String(decoding: seeded.body, as: UTF8.self))")

        let child = try ChildProcess(["import", "--env", "sandbox", "--endpoint", emulator.endpoint],
                                     in: harness.root, environment: ApplySignalTests.environment, name: "import-\(signal)")
        let pid = child.process.processIdentifier
        // Seen and signalled on one thread, so a busy concurrency pool cannot let the import run on.
        let signalled = try await onOwnThread { () -> Bool in
            for _ in 0..<12_000 {
                if child.errors.contains("  … importing sandbox: 7 of 63 calls (10%)") {
                    kill(pid, signal)
                    return true
                }
                if !child.process.isRunning { return false }
                usleep(5_000)
            }
            return false
        }
        #expect(signalled, "the import ended before the signal: \(child.errors)")
        let status = await child.finish(within: 30)
        return (emulator, pid, status, child.errors)
    }

    @Test("Ctrl-C (SIGINT) during a large import exits 130, says nothing was written, leaves no file; the next import completes")
    func interruptedImportLeavesNothing() async throws {
        let harness = try CommandHarness()
        let (emulator, _, status, errors) = try await Self.killedImport(SIGINT, harness: harness)
        #expect(status == 130, "\(errors)")
        #expect(errors.contains("import stopped by SIGINT while reading Apple: nothing was written. Run it again"), "\(errors)")
        #expect(try Self.importedFiles(harness).isEmpty)

        let again = try await Self.finished(["import", "--env", "sandbox", "--endpoint", emulator.endpoint], in: harness, name: "import-again")
        #expect(again.status == 0, "\(again.errors)")
        #expect(again.output.contains("Wrote manifests/imported-sandbox.yaml: 2000 external messages, 60 defaults."), "\(again.output)")
        #expect(try Self.importedFiles(harness) == ["imported-sandbox.yaml"])
        #expect(await harness.run(["validate"]).code == .success)
        #expect(await emulator.stop() == 0)
    }

    @Test("kill -9 during a large import leaves no imported file; the next import removes a killed write's .partial and completes")
    func killedImportCompletesOnRerun() async throws {
        let harness = try CommandHarness()
        let (emulator, pid, status, errors) = try await Self.killedImport(SIGKILL, harness: harness)
        #expect(status == SIGKILL, "\(errors)")
        #expect(try Self.importedFiles(harness).isEmpty)
        // What a kill -9 in the middle of the write leaves, by construction of the write: a hidden
        // .partial file of the dead process, never a half imported-sandbox.yaml.
        let partial = NewFile.partialURL(for: harness.file("manifests/imported-sandbox.yaml"), process: pid)
        try Data("# yaml-language-server: $schema=retention-sync.schema.json\napiVersion: retention-sync/v1\nkind: Exte".utf8).write(to: partial)
        #expect(await harness.run(["validate"]).code == .success, "a .partial file is no manifest")

        let again = try await Self.finished(["import", "--env", "sandbox", "--endpoint", emulator.endpoint], in: harness, name: "import-again")
        #expect(again.status == 0, "\(again.errors)")
        #expect(again.errors.contains("Removed manifests/\(partial.lastPathComponent), the unfinished file of an import that was killed while writing."),
                "\(again.errors)")
        #expect(try Self.importedFiles(harness) == ["imported-sandbox.yaml"])
        let text = try String(contentsOf: harness.file("manifests/imported-sandbox.yaml"), encoding: .utf8)
        #expect(Self.occurrences(of: "kind: ExternalMessage\n", in: text) == Self.messageCount)
        #expect(text.hasSuffix(" }\n"), "the file ends with its last default")

        let plan = try await Self.finished(["plan", "--env", "sandbox", "--endpoint", emulator.endpoint], in: harness, name: "plan")
        #expect(plan.output.contains("No changes. sandbox matches the manifests."), "\(plan.output)\(plan.errors)")
        #expect(await emulator.stop() == 0)
    }

    @Test("a new file is written whole under a free name, never over an existing one; only a dead process's .partial is removed")
    func newFileIsWholeOrNothing() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("newfile-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = directory.appendingPathComponent("imported-sandbox.yaml")

        #expect(try NewFile.create(Data("first\n".utf8), at: url))
        #expect(try !NewFile.create(Data("second\n".utf8), at: url), "the name is taken")
        #expect(try String(contentsOf: url, encoding: .utf8) == "first\n")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["imported-sandbox.yaml"], "no .partial left")

        // A live process's write in progress is left alone; a dead one's is removed.
        let mine = NewFile.partialURL(for: directory.appendingPathComponent("imported-sandbox-2.yaml"))
        // A process that has ended, waited for on a thread of its own (not one of the few async tests share).
        let deadProcess = try await onOwnThread {
            let child = Process()
            child.executableURL = URL(fileURLWithPath: "/bin/true")
            try child.run()
            child.waitUntilExit()
            return child.processIdentifier
        }
        let dead = NewFile.partialURL(for: directory.appendingPathComponent("imported-sandbox-3.yaml"), process: deadProcess)
        try Data("half".utf8).write(to: mine)
        try Data("half".utf8).write(to: dead)
        #expect(NewFile.removeAbandoned(in: directory, prefix: "imported-") == [dead.lastPathComponent])
        #expect(FileManager.default.fileExists(atPath: mine.path))
        #expect(!FileManager.default.fileExists(atPath: dead.path))

        // A leftover under this very process id (an earlier process that had it was killed) is replaced.
        let reused = directory.appendingPathComponent("imported-sandbox-4.yaml")
        try Data("half".utf8).write(to: NewFile.partialURL(for: reused))
        #expect(try NewFile.create(Data("whole\n".utf8), at: reused))
        #expect(try String(contentsOf: reused, encoding: .utf8) == "whole\n")
        #expect(!FileManager.default.fileExists(atPath: NewFile.partialURL(for: reused).path))

        let unwritable = directory.appendingPathComponent("missing/imported-sandbox.yaml")
        #expect(throws: CommandError.self) { try NewFile.create(Data("x".utf8), at: unwritable) }
    }
}
