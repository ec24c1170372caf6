public import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Headless Chromium for the tests that look at pages as a person would. Installed by
/// `.ci/setup --test` from the distribution's packages; when it is missing the tests that need it
/// fail and say how to install it — they never skip silently.
public struct Chromium: Sendable {
    public static let installHint = "Chromium is needed for the browser tests: run 'bash .ci/setup --test' (as root it installs the Debian package), or 'sudo apt-get install -y chromium'"

    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    public let executable: URL

    /// Headless Chromium's window is never narrower than this; a phone's width is a frame inside it.
    public static let minimumWindowWidth = 500

    /// A page holding `page` (a path relative to it) in a frame `width` × `height` CSS pixels;
    /// with `listen`, a message the framed page posts is appended as `<pre id="__measure">`.
    public static func frame(_ page: String, width: Int, height: Int, listen: Bool) -> String {
        let listener = listen ? """
            <script>window.addEventListener('message', e => { const pre = document.createElement('pre'); pre.id = '__measure'; \
            pre.textContent = e.data; document.body.appendChild(pre); });</script>
            """ : ""
        return """
            <!DOCTYPE html><html><head><meta charset="utf-8"></head><body style="margin:0">\(listener)
            <iframe src="\(page)" style="display:block;border:0;width:\(width)px;height:\(height)px"></iframe></body></html>
            """
    }

    /// Chromium from PATH (`chromium`, `chromium-browser`, `google-chrome`), or a failure naming the install command.
    public static func require() throws -> Chromium {
        for name in ["chromium", "chromium-browser", "google-chrome"] {
            if let found = Repository.tool(name) { return Chromium(executable: found) }
        }
        throw Failure(description: installHint)
    }

    /// The page's DOM after its load event and `budget` milliseconds of virtual time, laid out in a
    /// window `width` CSS pixels wide when given.
    public func dumpDOM(_ page: URL, budgetMilliseconds: Int = 5000, width: Int? = nil) async throws -> String {
        let size = width.map { ["--window-size=\($0),1000"] } ?? []
        let (output, _) = try await run(size + ["--virtual-time-budget=\(budgetMilliseconds)", "--dump-dom", page.absoluteString])
        return output
    }

    /// A PNG of the top `width` × `height` CSS pixels of the page; with `netLog`, Chromium's log of
    /// every network request (JSON) is written there.
    public func screenshot(_ page: URL, to png: URL, width: Int, height: Int, netLog: URL? = nil) async throws {
        var arguments = ["--screenshot=\(png.path)", "--window-size=\(width),\(height)"]
        if let netLog { arguments.append("--log-net-log=\(netLog.path)") }
        _ = try await run(arguments + [page.absoluteString])
        guard FileManager.default.fileExists(atPath: png.path) else {
            throw Failure(description: "Chromium wrote no screenshot of \(page.lastPathComponent)")
        }
    }

    /// The requests a page made, from a net log: Chromium's own background requests (update checks
    /// and the like, which carry no initiator) are left out, so what remains is what the page asked for.
    public static func pageRequests(inNetLog url: URL) throws -> [String] {
        let log = try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any] ?? [:]
        let constants = log["constants"] as? [String: Any] ?? [:]
        let types = constants["logEventTypes"] as? [String: Int] ?? [:]
        guard let start = types["URL_REQUEST_START_JOB"] else { throw Failure(description: "the net log names no URL_REQUEST_START_JOB event") }
        var requests: [String] = []
        for case let event as [String: Any] in log["events"] as? [Any] ?? [] where event["type"] as? Int == start {
            // The job's end event carries no URL; only its start names what was asked for.
            let parameters = event["params"] as? [String: Any] ?? [:]
            guard let url = parameters["url"] as? String, parameters["initiator"] as? String != "not an origin" else { continue }
            requests.append(url)
        }
        return requests
    }

    /// Runs Chromium headless with a profile of its own, for at most `timeout` seconds; returns its
    /// standard output and error. A run that outlives the timeout is killed and is a failure.
    func run(_ arguments: [String], timeout: TimeInterval = 90) async throws -> (String, String) {
        let executable = self.executable
        return try await onOwnThread {
            let scratch = try temporaryFolder("chromium")
            defer { try? FileManager.default.removeItem(at: scratch) }
            let out = scratch.appendingPathComponent("stdout"), err = scratch.appendingPathComponent("stderr")
            _ = FileManager.default.createFile(atPath: out.path, contents: nil)
            _ = FileManager.default.createFile(atPath: err.path, contents: nil)
            let process = Process()
            process.executableURL = executable
            process.arguments = ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
                                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                                 "--disable-extensions", "--user-data-dir=\(scratch.appendingPathComponent("profile").path)"] + arguments
            process.standardOutput = try FileHandle(forWritingTo: out)
            process.standardError = try FileHandle(forWritingTo: err)
            try process.run()
            let deadline = Date().addingTimeInterval(timeout)
            while process.isRunning, Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
            if process.isRunning {
                process.terminate()
                Thread.sleep(forTimeInterval: 2)
                if process.isRunning { kill(process.processIdentifier, SIGKILL) }
                process.waitUntilExit()
                throw Failure(description: "Chromium did not finish within \(Int(timeout)) s and was stopped: \(arguments.last ?? "")")
            }
            process.waitUntilExit()
            let stdout = String(decoding: (try? Data(contentsOf: out)) ?? Data(), as: UTF8.self)
            let stderr = String(decoding: (try? Data(contentsOf: err)) ?? Data(), as: UTF8.self)
            guard process.terminationStatus == 0 else {
                throw Failure(description: "Chromium exited with \(process.terminationStatus): \(stderr.suffix(2000))")
            }
            return (stdout, stderr)
        }
    }
}
