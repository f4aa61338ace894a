import Foundation

extension String {
    /// Percent-encoded for a query value: every byte but RFC 3986's unreserved characters.
    var queryEncoded: String {
        addingPercentEncoding(withAllowedCharacters: CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~"))!
    }
}

/// The Content-Type of Mishap's JSON bodies.
let jsonContentType = "application/json; charset=utf-8"
