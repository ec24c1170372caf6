import CLIKit
import Foundation
import RetentionSyncCommands
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// A parent (a CI runner, a test, a supervisor) may start this process with SIGINT, SIGTERM or
// SIGHUP blocked, and every thread would inherit that: apply could then not stop cleanly and serve
// could not drain or reload. Unblock them before any other thread exists.
var handled = sigset_t()
sigemptyset(&handled)
for number in [SIGINT, SIGTERM, SIGHUP] { sigaddset(&handled, number) }
sigprocmask(SIG_UNBLOCK, &handled, nil)

let environment = ProcessInfo.processInfo.environment
let context = CommandContext(console: .standard(environment: environment), environment: environment,
                             currentDirectory: URL(fileURLWithPath: FileManager.default.currentDirectoryPath))
let code = await CLI.run(Array(CommandLine.arguments.dropFirst()), context: context)
exit(code.rawValue)
