import Testing

/// A `POST /login` as a client sends it, and the answer the default scenarios must give it:
/// John's token, or an error. The engine's row tests and the socket tests share it.
public struct LoginAttempt: Sendable, CustomTestStringConvertible {
    /// The content type of a form body.
    public static let formContentType = "application/x-www-form-urlencoded"

    public let testDescription: String
    /// The body exactly as sent.
    public let body: String
    public let contentType: String
    /// The error's status and message; nil for John's token.
    public let error: (status: Int, message: String)?

    /// A JSON body.
    public init(_ description: String, json: String, error: (status: Int, message: String)? = nil) {
        testDescription = description
        body = json
        contentType = "application/json"
        self.error = error
    }

    /// A form, already percent-encoded.
    public init(_ description: String, form: String, contentType: String = LoginAttempt.formContentType,
                error: (status: Int, message: String)? = nil) {
        testDescription = description
        body = form
        self.contentType = contentType
        self.error = error
    }
}
