/// An image a message localization shows, as validation resolved the name: a managed image or an
/// external one (one identifier per environment). A kind a localization can show is a case here,
/// so every place that derives an upload body must say what it does with it.
public enum ShownImage: Sendable, Hashable {
    case image(ImageManifest)
    case external(ExternalImageManifest)
}

/// One localization of a message with the images it shows, resolved.
public struct ResolvedLocalization: Sendable, Hashable {
    public var localization: MessageLocalization
    /// The localization's own image.
    public var image: ShownImage?
    /// One per bullet point, in order.
    public var bulletPoints: [ShownImage]
}

/// A managed message with every localization resolved. Downstream of validation, messages are
/// read from here, so nothing zips positions back onto the manifests.
public struct ResolvedMessage: Sendable, Hashable {
    public var message: MessageManifest
    public var localizations: [ResolvedLocalization]
}

/// A default with what it assigns, resolved.
public struct ResolvedDefault: Sendable, Hashable {
    /// What a default assigns: one localization of a managed message (the first message of the name,
    /// its first localization in the pair's locale), or an external message, which has one identifier
    /// for every locale.
    public enum Assigns: Sendable, Hashable {
        case localization(MessageManifest, locale: String)
        case external(ExternalMessageManifest)
    }

    public var assignment: DefaultAssignment
    public var assigns: Assigns
}
