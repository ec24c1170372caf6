import Foundation
@testable import Reconciler
import RetentionMessagingModels
import Testing

/// What holds "a new content kind is one folder and one registry line": every place that must know
/// a kind asks the registry, and these fail when the registry and the kinds disagree.
@Suite("The resource registry")
struct ResourceRegistryTests {
    @Test("every content kind has exactly one registered content resource")
    func everyContentKindIsRegisteredOnce() {
        for kind in ContentKind.allCases {
            let resources = RemoteResources.content.filter { $0.contentKind == kind }
            #expect(resources.count == 1, "content kind '\(kind)' has \(resources.count) registered resources")
        }
        #expect(RemoteResources.content.count == ContentKind.allCases.count)
        #expect(RemoteResources.content.allSatisfy { $0.isContent })
    }

    @Test("every action kind belongs to one registered resource, and apply runs each kind once")
    func actionKindsAreUnique() {
        let kinds = ActionKind.allCases
        #expect(Set(kinds).count == kinds.count)
        #expect(Set(RemoteResources.all.map { $0.id }).count == RemoteResources.all.count)
        for resource in RemoteResources.all {
            for kind in resource.actionKinds { #expect(RemoteResources.resource(of: kind) == resource) }
        }
        // Content is uploaded before anything refers to it and deleted after: every content kind
        // uploads and deletes.
        for resource in RemoteResources.content {
            #expect(resource.verbs.contains(.upload) && resource.verbs.contains(.delete), "\(resource.id)")
        }
    }

    @Test("the remote fingerprint, the estimate and the apply progress count every content kind")
    func everyKindIsCounted() throws {
        let remote = RemoteState(environment: .sandbox)
        let fingerprint = try JSONSerialization.jsonObject(with: try CanonicalJSON.encode(remote)) as? [String: Any]
        let desired = DesiredState(environment: .sandbox, bundleId: "com.example", appAppleId: nil, identityNamespace: "n",
                                   images: [], messages: [], declaredPairs: [], defaults: [], realtimeURL: nil, snapshotPath: nil,
                                   rules: [], localeFallbacks: [:], pngs: [:])
        let planned = try Planner.plan(desired: desired, remote: remote, hasSnapshotStore: false)
        let estimate = try JSONSerialization.jsonObject(with: try CanonicalJSON.encode(planned.plan.estimate)) as? [String: Any]
        for kind in ContentKind.allCases {
            #expect(fingerprint?["\(kind.rawValue)s"] != nil, "the remote fingerprint leaves out \(kind)s")
            #expect(estimate?["\(kind.rawValue)s_after"] as? Int == 0, "the estimate leaves out \(kind)s")
            #expect(estimate?["\(kind.rawValue)s_cap"] as? Int == kind.cap)
        }
        #expect(Applier.newlyApproved(planned, after: remote).map(\.0) == ContentKind.allCases)
    }

    @Test("a plan's JSON problem kinds read back as the content kind they name")
    func problemKindsRoundTrip() throws {
        for kind in ContentKind.allCases {
            let problem = PlanProblem.Kind(rejected: kind)
            let data = try JSONEncoder().encode([problem])
            #expect(String(decoding: data, as: UTF8.self) == "[\"rejected_\(kind.rawValue)\"]")
            #expect(try JSONDecoder().decode([PlanProblem.Kind].self, from: data) == [problem])
        }
        #expect(throws: DecodingError.self) { try JSONDecoder().decode([PlanProblem.Kind].self, from: Data("[\"rejected_unknown\"]".utf8)) }
    }
}
