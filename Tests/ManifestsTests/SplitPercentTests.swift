import Foundation
@testable import Manifests
import RetentionMessagingModels
import Testing
import YAML

@Suite("Traffic split percentages")
struct SplitPercentTests {
    private func diagnostics(percent: Double) -> [Diagnostic] {
        var set = makeSet(messages: [textMessage()])
        let rule = FlowRule(name: "half", match: RuleMatch(split: TrafficSplit(group: "test", percent: percent)),
                            response: .message(name: "stay"), location: here(6))
        set.flows = [FlowManifest(name: "cancel", localeFallbacks: [:], rules: [rule], location: here(6))]
        return ManifestValidator.validate(set)
    }

    @Test("an infinite or huge percent written in YAML (.inf, 1e300) is reported, not a crash")
    func absurdPercentIsReported() {
        for percent in [Double.infinity, 1e300, -1e300] {
            let found = diagnostics(percent: percent).filter { $0.code == "invalid-split-percent" }
            #expect(found.count == 1, "\(percent)")
        }
        #expect(diagnostics(percent: .infinity).contains { $0.message.contains("split percent inf is outside") })
    }
}
