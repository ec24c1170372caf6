import Crypto
import Foundation

/// Reads `advancedCommerceData` as Apple's documentation describes it, without verifying the
/// signature (the emulator holds no developer key): the Base64 of `{"signatureInfo":{"token":JWS}}`,
/// the JWS's `request` claim the Base64 of a SubscriptionModifyInAppRequest with one change item.
enum AdvancedCommerceData {
    struct Wrapper: Decodable {
        struct SignatureInfo: Decodable { var token: String }
        var signatureInfo: SignatureInfo
    }

    struct Claims: Decodable {
        var aud: String
        var request: String
    }

    struct Request: Decodable {
        struct ChangeItem: Decodable {
            var sku: String
            private enum CodingKeys: String, CodingKey { case sku = "SKU" }
        }
        var operation: String
        var changeItems: [ChangeItem]?
    }

    /// The request the data carries, when it has the documented shape: audience
    /// `advanced-commerce-api`, operation MODIFY_SUBSCRIPTION, exactly one change item.
    static func request(_ data: String) -> Request? {
        guard let wrapperJSON = Data(base64Encoded: data),
              let wrapper = try? JSONDecoder().decode(Wrapper.self, from: wrapperJSON),
              let jws = try? JWS.decode(wrapper.signatureInfo.token),
              let claims = try? JSONDecoder().decode(Claims.self, from: Data(jws.payloadJSON)),
              claims.aud == "advanced-commerce-api",
              let requestJSON = Data(base64Encoded: claims.request),
              let request = try? JSONDecoder().decode(Request.self, from: requestJSON),
              request.operation == "MODIFY_SUBSCRIPTION", request.changeItems?.count == 1 else { return nil }
        return request
    }

    /// The SKU the customer is offered to change to.
    static func changedSKU(_ data: String) -> String? {
        request(data)?.changeItems?.first?.sku
    }
}
