import Basics
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

@Suite("Split arms that compare nothing")
struct IdenticalArmsTests {
    private func arms(_ responses: [RuleResponse], messages: [MessageManifest], defaultMessage: String) -> [Diagnostic] {
        var set = makeSet(messages: messages, defaultsFor: defaultMessage)
        let rules = responses.enumerated().map { index, response in
            FlowRule(name: "arm-\(index)", match: RuleMatch(split: TrafficSplit(group: "test", percent: 30, control: index == 0)),
                     response: response, location: here(6 + index))
        }
        set.flows = [FlowManifest(name: "cancel", localeFallbacks: [:], rules: rules, location: here(6))]
        return ManifestValidator.validate(set).filter { $0.code == "split-arms-identical" }
    }

    @Test("a holdout (response: none) whose default is the control's own message is warned, naming both arms, the message, product and locales")
    func holdoutEqualToControlIsWarned() {
        let found = arms([.message(name: "stay"), .none], messages: [textMessage("stay"), textMessage("other", header: "Other")],
                         defaultMessage: "stay")
        #expect(found.count == 1)
        let warning = found.first
        #expect(warning?.severity == .warning)
        #expect(warning?.message == "split group 'test': arms 'arm-0' (message 'stay') and 'arm-1' (no answer: Apple shows the default 'stay') show the same content for com.example.app.monthly in de-DE, en-US, so comparing them there measures nothing")
        #expect(warning?.location?.line == 7)
        #expect(warning?.hint?.contains("set a different default") == true)
    }

    @Test("two arms answering messages with the same text are warned; a different text, offer or default is not")
    func sameTextDifferentNames() {
        let twin = textMessage("twin")
        #expect(arms([.message(name: "stay"), .message(name: "twin")], messages: [textMessage("stay"), twin], defaultMessage: "stay").count == 1)
        #expect(arms([.message(name: "stay"), .message(name: "other")],
                     messages: [textMessage("stay"), textMessage("other", header: "Other")], defaultMessage: "stay").isEmpty)
        #expect(arms([.message(name: "stay"), .none], messages: [textMessage("stay"), textMessage("other", header: "Other")],
                     defaultMessage: "other").isEmpty)
        #expect(arms([.message(name: "stay"), .promotionalOffer(message: "stay", offerIdentifier: "half")],
                     messages: [textMessage("stay")], defaultMessage: "stay").isEmpty)
    }
}
