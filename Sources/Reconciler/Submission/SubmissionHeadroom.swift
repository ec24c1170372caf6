public import RetentionMessagingModels

/// Whether an environment has room for a pull request's content.
///
/// Content submitted from pull requests stays in Apple's store until pruned, and the store holds at
/// most 2,000 messages and 2,000 images. So a pull-request submission keeps `reserve` of each free
/// for what the main branch publishes: it is refused, with the numbers, when it would leave less.
public struct SubmissionHeadroom: Sendable, Hashable {
    public static let defaultReserve = 200

    public struct Count: Sendable, Hashable {
        public var kind: ContentKind
        public var existing: Int
        public var uploading: Int
        public var cap: Int

        public var after: Int { existing + uploading }
    }

    public var environment: Environment
    public var reserve: Int
    public var counts: [Count]

    public init(environment: Environment, counts: [Count], reserve: Int = SubmissionHeadroom.defaultReserve) {
        self.environment = environment
        self.reserve = reserve
        self.counts = counts
    }

    public init(environment: Environment, existingMessages: Int, existingImages: Int, uploadingMessages: Int,
                uploadingImages: Int, reserve: Int = SubmissionHeadroom.defaultReserve) {
        self.init(environment: environment,
                  counts: [Count(kind: .message, existing: existingMessages, uploading: uploadingMessages, cap: ContentKind.message.cap),
                           Count(kind: .image, existing: existingImages, uploading: uploadingImages, cap: ContentKind.image.cap)],
                  reserve: reserve)
    }

    /// The room `uploads` (the ready uploads of `planned`) leave, for every content kind.
    public init(_ planned: PlanResult, uploads: [PlanAction], reserve: Int = SubmissionHeadroom.defaultReserve) {
        self.init(environment: planned.desired.environment, counts: ContentKind.allCases.map { kind in
            let resource = RemoteResources.resource(of: kind)
            return Count(kind: kind, existing: resource.remoteStates(in: planned.remote).count,
                         uploading: uploads.filter { $0.kind == resource.uploadKind }.count, cap: kind.cap)
        }, reserve: reserve)
    }

    /// The counts that would leave less than `reserve` free (only those that upload anything).
    public var tooFull: [Count] { counts.filter { $0.uploading > 0 && $0.after > $0.cap - reserve } }

    public var allowed: Bool { tooFull.isEmpty }
}
