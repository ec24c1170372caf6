import Basics
import Emulator
import Foundation
import RetentionMessaging
import RetentionMessagingModels
import Testing
import TestSupport

@Suite("Emulator state and persistence")
struct EmulatorStateTests {
    func temporaryFile() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("emulator-state-\(UUID().uuidString).json")
    }

    @Test("with a state file, every change is written at once, and a new emulator loads both environments from it")
    func persistence() async throws {
        let file = temporaryFile()
        defer { try? FileManager.default.removeItem(at: file) }
        let app = TestApp()
        let emulator = app.emulator(stateFile: file)
        try await app.client(.sandbox, transport: emulator.transport()).uploadMessage(identifier: Fixtures.uuid(1), body: Fixtures.plainMessage)
        try await app.client(.production, transport: emulator.transport()).uploadMessage(identifier: Fixtures.uuid(2), body: Fixtures.plainMessage)
        #expect(try EmulatorStateFile.read(from: file).production.messages[Fixtures.uuid(2)]?.state == .pending)
        try emulator.approveMessage(Fixtures.uuid(2), in: .production)
        #expect(try EmulatorStateFile.read(from: file).production.messages[Fixtures.uuid(2)]?.state == .approved)

        let restarted = app.emulator()
        try restarted.load(from: file)
        #expect(restarted.state(of: .sandbox) == emulator.state(of: .sandbox))
        #expect(restarted.state(of: .production) == emulator.state(of: .production))
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: file.deletingLastPathComponent().path)
            .filter { $0.contains(file.lastPathComponent) && $0 != file.lastPathComponent }
        #expect(leftovers.isEmpty)
    }

    @Test("the state file is stable: sorted keys, defaults sorted by product and locale")
    func stableFile() throws {
        let emulator = TestApp().emulator()
        emulator.restore(.with(messages: [Fixtures.uuid(1): (.approved, Fixtures.plainMessage)],
                               defaults: [DefaultKey(productId: "b", locale: "en-US"): Fixtures.uuid(1),
                                          DefaultKey(productId: "a", locale: "fr-FR"): Fixtures.uuid(1),
                                          DefaultKey(productId: "a", locale: "de-DE"): Fixtures.uuid(1)]), in: .sandbox)
        let first = temporaryFile()
        let second = temporaryFile()
        defer {
            try? FileManager.default.removeItem(at: first)
            try? FileManager.default.removeItem(at: second)
        }
        try emulator.save(to: first)
        try emulator.save(to: second)
        let text = try String(contentsOf: first, encoding: .utf8)
        #expect(try Data(contentsOf: first) == Data(contentsOf: second))
        let order = ["\"de-DE\"", "\"a\"", "\"fr-FR\"", "\"a\"", "\"en-US\"", "\"b\""].reduce((text.startIndex, true)) { state, needle in
            guard state.1, let range = text.range(of: needle, range: state.0..<text.endIndex) else { return (state.0, false) }
            return (range.upperBound, true)
        }
        #expect(order.1)
        #expect(text.contains("\"formatVersion\" : 1"))
    }

    @Test("a file that is not an emulator state file is refused with its path and what to do")
    func badFile() throws {
        let file = temporaryFile()
        defer { try? FileManager.default.removeItem(at: file) }
        try Data("not json".utf8).write(to: file)
        let error = try #require(throws: EmulatorError.self) { try TestApp().emulator().load(from: file) }
        #expect(error.description.contains(file.path))
        #expect(error.description.contains("delete it"))
    }

    @Test("content is removed message first, then its image")
    func removalOrder() async throws {
        let app = TestApp()
        let emulator = app.emulator()
        emulator.restore(.with(messages: [Fixtures.uuid(1): (.approved, Fixtures.messageWithImage(Fixtures.uuid(0x100)))],
                               images: [Fixtures.uuid(0x100): (.approved, .fullSize)]), in: .sandbox)
        let client = app.client(transport: emulator.transport())
        #expect(await apiError { try await client.deleteImage(identifier: Fixtures.uuid(0x100)) }?.errorCode == 4030019)
        try await client.deleteMessage(identifier: Fixtures.uuid(1))
        try await client.deleteImage(identifier: Fixtures.uuid(0x100))
        #expect(emulator.state(of: .sandbox) == .empty)
    }

    @Test("admin review calls on unknown identifiers say so")
    func unknownReview() {
        let emulator = TestApp().emulator()
        #expect(throws: EmulatorError.notFound("no image \(Fixtures.uuid(1)) in production")) {
            try emulator.approveImage(Fixtures.uuid(1), in: .production)
        }
    }

    @Test("Apple's rate limits in the emulator: sandbox gets a tenth of production's hourly budget")
    func appleRateLimit() async throws {
        let clock = VirtualClock()
        let app = TestApp()
        let emulator = app.emulator(rateLimit: .apple, clock: clock)
        let client = app.client(.sandbox, transport: emulator.transport(), clock: clock, retry: .none)
        for _ in 0..<360 { _ = try await client.getMessageList() }
        let error = await apiError { _ = try await client.getMessageList() }
        #expect(error?.statusAndCode == "429 4290000")
        clock.advance(by: 10)
        _ = try await client.getMessageList()
    }
}
