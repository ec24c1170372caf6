public import Foundation

/// The run that wrote a version of the state document: in GitHub Actions the run's URL, elsewhere
/// the user and host. It is what `state history` lists and what a refused write names, so a team
/// can see which job's apply won a race. Never a secret: no token, no key.
public struct StateWriter: Codable, Sendable, Hashable, CustomStringConvertible {
    /// `GitHub Actions run 1234 (attempt 2), acme/app, refs/pull/7/merge` or `alice@laptop`.
    public var run: String
    /// `https://github.com/acme/app/actions/runs/1234/attempts/2`, when there is one.
    public var url: String?

    public init(run: String, url: String? = nil) {
        self.run = run
        self.url = url
    }

    public var description: String { url ?? run }

    /// Who is running, from the environment: GitHub Actions' `GITHUB_SERVER_URL`,
    /// `GITHUB_REPOSITORY`, `GITHUB_RUN_ID`, `GITHUB_RUN_ATTEMPT` and `GITHUB_REF`; else `USER@host`.
    public static func current(environment: [String: String] = ProcessInfo.processInfo.environment,
                               host: String = ProcessInfo.processInfo.hostName) -> StateWriter {
        func value(_ name: String) -> String? {
            environment[name].flatMap { $0.trimmingCharacters(in: .whitespaces).isEmpty ? nil : $0 }
        }
        if let runId = value("GITHUB_RUN_ID"), let repository = value("GITHUB_REPOSITORY") {
            let server = (value("GITHUB_SERVER_URL") ?? "https://github.com").trimmingSuffix("/")
            let attempt = value("GITHUB_RUN_ATTEMPT").flatMap { $0 == "1" ? nil : $0 }
            let url = "\(server)/\(repository)/actions/runs/\(runId)" + (attempt.map { "/attempts/\($0)" } ?? "")
            let run = "GitHub Actions run \(runId)" + (attempt.map { " (attempt \($0))" } ?? "") + ", \(repository)"
                + (value("GITHUB_REF").map { ", \($0)" } ?? "")
            return StateWriter(run: run, url: url)
        }
        let user = value("USER") ?? value("LOGNAME") ?? "someone"
        return StateWriter(run: "\(user)@\(host)")
    }
}

extension ContentSubmission {
    /// `pr-123` for a GitHub Actions run of a pull request (`GITHUB_REF=refs/pull/123/merge`), else nil.
    public static func submitter(environment: [String: String]) -> String? {
        guard let ref = environment["GITHUB_REF"], ref.hasPrefix("refs/pull/") else { return nil }
        let number = ref.dropFirst("refs/pull/".count).prefix { $0.isNumber }
        return number.isEmpty ? nil : "pr-\(number)"
    }
}

extension String {
    func trimmingSuffix(_ suffix: String) -> String {
        hasSuffix(suffix) ? String(dropLast(suffix.count)) : self
    }
}
