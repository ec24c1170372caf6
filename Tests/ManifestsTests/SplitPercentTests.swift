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

    @Test("a split group may name one control; a second is an error naming both rules")
    func oneControlPerGroup() {
        func validate(_ controls: [Bool]) -> [Diagnostic] {
            var set = makeSet(messages: [textMessage()])
            let rules = controls.enumerated().map { index, control in
                FlowRule(name: "arm-\(index)", match: RuleMatch(split: TrafficSplit(group: "test", percent: 25, control: control)),
                         response: .message(name: "stay"), location: here(6))
            }
            set.flows = [FlowManifest(name: "cancel", localeFallbacks: [:], rules: rules, location: here(6))]
            return ManifestValidator.validate(set).filter { $0.code == "split-two-controls" }
        }
        #expect(validate([true, false, false]).isEmpty)
        let twice = validate([true, false, true])
        #expect(twice.count == 1)
        #expect(twice.first?.message.contains("rules 'arm-0' and 'arm-2' both say control: true") == true)
    }
}
