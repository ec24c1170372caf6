import Basics
import Foundation
import RetentionMessagingModels
import YAML

extension Loader {
    mutating func convert(_ raw: RawMessage, node: YAMLNode) -> MessageManifest {
        let localeKeys = Self.keyLocations(node, "localizations")
        var localizations: [MessageLocalization] = []
        for (locale, item) in raw.localizations {
            let value = item.value
            var image: ImageReference?
            if let reference = value.image {
                image = ImageReference(name: reference.value.name.value, altText: reference.value.altText.value,
                                       location: reference.location)
                image?.fieldLocations = [.name: reference.value.name.location, .altText: reference.value.altText.location]
            }
            let bullets = (value.bulletPoints ?? []).map { bullet in
                var converted = BulletPoint(text: bullet.value.text.value, image: bullet.value.image.value,
                                            altText: bullet.value.altText.value, location: bullet.location)
                converted.fieldLocations = [.text: bullet.value.text.location, .image: bullet.value.image.location,
                                            .altText: bullet.value.altText.location]
                return converted
            }
            var localization = MessageLocalization(locale: locale, header: value.header.value, body: value.body.value,
                                                   image: image, bulletPoints: bullets,
                                                   location: localeKeys[locale] ?? item.location)
            var fields: [MessageLocalization.Field: SourceLocation] = [.header: value.header.location, .body: value.body.location]
            fields[.bulletPoints] = node["localizations"]?[locale]?["bulletPoints"]?.location
            localization.fieldLocations = fields
            localizations.append(localization)
        }
        localizations.sort { $0.locale < $1.locale }
        var message = MessageManifest(name: raw.name.value, product: raw.product?.value,
                                      headerPosition: raw.headerPosition.map { HeaderPosition(rawValue: $0.value) },
                                      localizations: localizations, location: raw.name.location)
        var fields: [MessageManifest.Field: SourceLocation] = [.name: raw.name.location]
        fields[.product] = raw.product?.location
        fields[.headerPosition] = raw.headerPosition?.location
        message.fieldLocations = fields
        return message
    }
}
