import Basics
import Crypto
import Emulator
import Foundation
import TestSupport
import HTTPCore
import RetentionMessaging
import RetentionMessagingModels

/// Apple's API as the in-process emulator plays it, with a virtual clock so Apple's rate limits
/// cost no real time. Production needs a passed sandbox performance test before a realtime URL
/// can be set; tests start with one recorded, as a real app would have before going live.
final class EmulatedApple: Sendable {
    static let key = ES256PrivateKey.generate()

    let emulator: Emulator
    let clock: VirtualClock
    let credentials: Credentials

    init() {
        let clock = VirtualClock()
        self.clock = clock
        credentials = Credentials(keyId: "TESTKEY123", issuerId: "57246542-96fe-1a63-e053-0824d011072a",
                                  bundleId: Fixtures.bundleId, privateKey: Self.key)
        emulator = Emulator(configuration: EmulatorConfiguration(publicKey: Self.key.publicKey, keyId: credentials.keyId,
                                                                 issuerId: credentials.issuerId, bundleId: Fixtures.bundleId,
                                                                 productionReview: .manual, rateLimit: .apple, clock: clock))
        var sandbox = emulator.state(of: .sandbox)
        sandbox.performanceTests["passed-before-the-test"] = .pass
        emulator.restore(sandbox, in: .sandbox)
    }

    /// A client as `plan` and `apply` make one, paced to Apple's limits on the virtual clock.
    func client(_ environment: Environment) -> RetentionMessagingClient {
        RetentionMessagingClient(environment: environment, credentials: credentials,
                                 transport: emulator.transport(defaultEnvironment: environment),
                                 pacing: .apple, clock: clock, retry: .none)
    }

    func state(_ environment: Environment) -> EmulatorState { emulator.state(of: environment) }

    /// The tool dies after `requests` more requests (nil: never).
    func halt(after requests: Int?) { emulator.setFaults(FaultInjection(haltAfterRequests: requests)) }
}

/// Valid PNGs for tests: the example app's pictures, and variants of them that differ only by a
/// text chunk (Apple's checks read chunk headers, so a variant is a different picture to them).
enum TestPNG {
    static let root = Repository.url("manifests/images")

    static let fullSize: [UInt8] = load("hero.png")
    static let bulletPoint: [UInt8] = load("bullet-breathe.png")

    static func load(_ name: String) -> [UInt8] {
        (try? Array(Data(contentsOf: root.appendingPathComponent(name)))) ?? []
    }

    static func variant(of png: [UInt8], tag: String) -> [UInt8] {
        let typeAndData = Array("tEXt".utf8) + Array("Comment".utf8) + [0] + Array(tag.utf8)
        let length = UInt32(typeAndData.count - 4)
        let chunk = bigEndian(length) + typeAndData + bigEndian(crc32(typeAndData))
        var out = png
        out.insert(contentsOf: chunk, at: png.count - 12)
        return out
    }

    static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }

    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? 0xEDB8_8320 ^ (crc >> 1) : crc >> 1 }
        }
        return crc ^ 0xFFFF_FFFF
    }
}
