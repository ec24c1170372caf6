import Manifests

// The realtime URL's slice of the desired state: the App's URL for the environment, if it names one.
extension RealtimeURLResource {
    static func derive(_ derivation: Derivation) -> String? {
        derivation.validated.set.app.settings(for: derivation.environment)?.realtimeURL
    }
}
