public import CLIKit
public import HTTPCore
public import StateLocations
public import StateStore

/// `state migrate` as a use case: copies an environment's state document into an empty store with
/// the versions the old store kept (replayed oldest first, so the new store keeps them as its own
/// history), then reads it back and compares digests. The old store is left as it was.
public enum StateMigration {
    /// What was moved.
    public struct Moved: Sendable {
        public var from: String
        public var to: String
        /// The digest the copy read back with, equal to the source's.
        public var digest: String
        /// Earlier versions carried over.
        public var earlierVersions: Int
    }

    public static func move(from source: StateLocation, to destination: StateLocation, owner: StateOwner, environment: [String: String],
                            transport: any HTTPTransport) async throws(CommandError) -> Moved {
        do {
            let from = try StateStores.open(source, owner: owner, environment: environment, transport: transport)
            let to = try StateStores.open(destination, owner: owner, environment: environment, transport: transport)
            guard from.location != to.location else {
                throw CommandError("--from and the destination are the same store (\(to.location)); nothing to move", exitCode: .usage)
            }
            guard let document = try await from.read().document?.sealed() else {
                throw CommandError("\(from.location) holds no state document for \(owner); nothing to move")
            }
            if let existing = try await to.read().document {
                throw CommandError("\(to.location) already holds a state document (\(try existing.sealed().digest)); "
                                   + "refusing to overwrite it. Compare the two with 'state show', and move the one to keep into an empty store")
            }
            // The kept versions first, oldest first, each written over the one before: the new store
            // keeps each replaced one in its own history, as if its writes had happened there.
            let kept = try await from.versions().filter { !$0.current }.map(\.document)
            var condition = StateWriteCondition.createOnly
            for version in kept + [document] {
                condition = .ifMatch(try await to.write(version, condition: condition))
            }
            guard let copied = try await to.read().document?.sealed(), copied.digest == document.digest else {
                throw CommandError("the copy in \(to.location) does not read back with digest \(document.digest); "
                                   + "check the store, and keep using \(from.location) until a migrate succeeds")
            }
            return Moved(from: "\(from.location)", to: "\(to.location)", digest: "\(copied.digest)", earlierVersions: kept.count)
        } catch let error as CommandError {
            throw error
        } catch let error as StateStoreError {
            throw CommandError(error.description)
        } catch {
            throw CommandError("\(error)")
        }
    }
}
