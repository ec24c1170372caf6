import Foundation
import RetentionSyncCommands

let environment = ProcessInfo.processInfo.environment
let context = CommandContext(console: .standard(environment: environment), environment: environment,
                             currentDirectory: URL(fileURLWithPath: FileManager.default.currentDirectoryPath))
let code = await CLI.run(Array(CommandLine.arguments.dropFirst()), context: context)
exit(code.rawValue)
