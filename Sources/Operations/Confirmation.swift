public import CLIKit
import Foundation
public import Reconciler
import Views

/// Terraform's habit: a person at a terminal confirms an apply by typing `yes`; without a terminal
/// (CI) nothing is asked, and `--auto-approve` skips the question.
public enum Confirmation {
    /// Returns normally when the apply may go ahead; throws when the person did not type `yes`.
    public static func confirmApply(actions count: Int, environment: String, autoApprove: Bool,
                             console: Console) throws(CommandError) {
        guard !autoApprove, count > 0, console.isInteractive else { return }
        console.print("Apply these \(count) action\(count == 1 ? "" : "s") to \(environment)? Only 'yes' will be accepted (or run with --auto-approve).")
        console.write("  Enter a value: ")
        let answer = console.readLine()?.trimmingCharacters(in: .whitespaces)
        console.print("")
        guard answer == "yes" else {
            throw CommandError("apply cancelled: nothing was changed (type 'yes' to apply, or pass --auto-approve)")
        }
    }
}

/// A plan saved by `plan --out`, read with a message that says what to do when it cannot be used.
public func readSavedPlan(_ path: String, context: CommandContext) throws(CommandError) -> SavedPlan {
    let data = try readFile(path, what: "the saved plan", context: context)
    let advice = "make it again with 'retention-sync plan --env ENV --out \(path)'"
    guard let object = try? JSONSerialization.jsonObject(with: data) else {
        throw CommandError("cannot use the saved plan \(path): not valid JSON (corrupt or cut short); \(advice)")
    }
    guard let fields = object as? [String: Any], fields["format_version"] != nil, fields["actions"] != nil else {
        throw CommandError("cannot use the saved plan \(path): it is JSON but not a plan written by 'retention-sync plan --out'; \(advice)")
    }
    do {
        return try SavedPlan.load(data)
    } catch {
        if case .invalidPlan(let reason) = error, reason.hasPrefix("not a retention-sync plan file") {
            throw CommandError("cannot use the saved plan \(path): some of its fields are missing or of the wrong type; \(advice)")
        }
        throw CommandError("\(path): \(PlanWording.describe(error))")
    }
}
