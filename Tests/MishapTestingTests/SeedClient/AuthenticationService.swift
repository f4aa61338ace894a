import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `GET /isUserNameAvailable` answered: `{"isAvailable": true, "userName": "..."}`.
struct UserNameAvailableMessage: Decodable, Equatable, Sendable {
    let isAvailable: Bool
    let userName: String
}

/// `POST /login` answered: `{"user_id": "123", "token": "..."}` (seed 001).
struct LoginResponse: Decodable, Equatable, Sendable {
    let userID: String
    let token: String

    enum CodingKeys: String, CodingKey {
        case userID = "user_id"
        case token
    }
}

/// Everything that can go wrong, in the terms a screen shows it (seed 002's `APIError`, with
/// seed 001's login failures).
enum APIError: Error, Equatable {
    /// 400: the input is wrong; `reason` is the server's own text, shown under the field.
    case validation(reason: String)
    /// 5xx or 429: the server cannot answer now. `retryAfter` is its `Retry-After` in seconds
    /// (an HTTP date is turned into seconds from now), nil when it gave none.
    case server(status: Int, reason: String, retryAfter: TimeInterval?)
    /// A login turned down (401, 404), with the server's `error_message`.
    case invalidCredentials(String)
    /// Any other status, with the server's text.
    case unexpectedStatus(Int, reason: String)
    /// A 2xx whose body does not decode: the server speaks a newer API ("please update the app").
    case decoding
    /// No answer: the connection failed, broke, timed out, or the bytes were not HTTP.
    case transport(URLError.Code)
}

/// When to send a request again after it failed.
///
/// The rule, from seed 002: only a server error that says when to come back (`Retry-After`)
/// is retried. The seed server sends `Retry-After` with `maintenance`, a passing state, and
/// leaves it out of `servererror` "as we assume that this is not a temporary situation, and
/// retrying would be futile". Validation errors, refused logins and undecodable answers would
/// fail the same way again, and transport errors are left to the screen (the sign-up form
/// ignores them while the user types).
///
/// Before retry `n` (1 for the first) the client waits `baseDelay * 2^(n-1)`, and never less
/// than `Retry-After`. A server asking for more than `longestWait` is reported at once rather
/// than keeping the user waiting.
struct RetryPolicy: Sendable {
    /// Requests sent at most, the first one included.
    var maxAttempts = 3
    /// The pause before the first retry; it doubles before each next one.
    var baseDelay: TimeInterval = 0.05
    /// The longest `Retry-After` worth waiting for.
    var longestWait: TimeInterval = 5

    /// Sends once, never retries.
    static let never = RetryPolicy(maxAttempts: 1)

    /// How long to wait before retry number `retry`, or nil when `error` is not worth a retry.
    func delay(beforeRetry retry: Int, after error: APIError) -> TimeInterval? {
        guard retry < maxAttempts, case .server(_, _, let retryAfter?) = error, retryAfter <= longestWait else {
            return nil
        }
        let backoff = baseDelay * pow(2, Double(retry - 1))
        return max(backoff, retryAfter)
    }
}

/// The sign-up form's and the login screen's server, talked to as in seed 002's
/// `AuthenticationService`, with async/await instead of Combine.
final class AuthenticationService: Sendable {
    let baseURL: URL
    let retryPolicy: RetryPolicy
    private let session: URLSession

    init(baseURL: URL, configuration: URLSessionConfiguration = .ephemeral, retryPolicy: RetryPolicy = RetryPolicy()) {
        self.baseURL = baseURL
        self.retryPolicy = retryPolicy
        session = URLSession(configuration: configuration)
    }

    deinit { session.finishTasksAndInvalidate() }

    /// Whether `userName` can still be taken.
    func checkUserNameAvailable(_ userName: String) async throws(APIError) -> UserNameAvailableMessage {
        var components = URLComponents(url: baseURL.appendingPathComponent("isUserNameAvailable"), resolvingAgainstBaseURL: false)!
        components.queryItems = [URLQueryItem(name: "userName", value: userName)]
        return try await send(URLRequest(url: components.url!))
    }

    /// Signs in; a refused login is `.invalidCredentials` with the server's message.
    func login(email: String, password: String) async throws(APIError) -> LoginResponse {
        var request = URLRequest(url: baseURL.appendingPathComponent("login"))
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = try? JSONEncoder().encode(["email": email, "password": password])
        do {
            return try await send(request)
        } catch .unexpectedStatus(let status, let message) where status == 401 || status == 404 {
            throw .invalidCredentials(message)
        }
    }

    // MARK: Sending

    /// Sends `request`, retrying as `retryPolicy` says.
    private func send<Answer: Decodable>(_ request: URLRequest) async throws(APIError) -> Answer {
        var retry = 1
        while true {
            do {
                return try await sendOnce(request)
            } catch {
                guard let delay = retryPolicy.delay(beforeRetry: retry, after: error) else { throw error }
                do {
                    try await Task.sleep(for: .seconds(delay))
                } catch {
                    throw .transport(.cancelled)
                }
                retry += 1
            }
        }
    }

    private func sendOnce<Answer: Decodable>(_ request: URLRequest) async throws(APIError) -> Answer {
        let data: Data
        let response: URLResponse
        do {
            (data, response) = try await session.data(for: request)
        } catch let error as URLError {
            throw .transport(error.code)
        } catch {
            throw .transport(.unknown)
        }
        guard let response = response as? HTTPURLResponse else { throw .transport(.badServerResponse) }

        let status = response.statusCode
        switch status {
        case 200..<300:
            do {
                return try JSONDecoder().decode(Answer.self, from: data)
            } catch {
                throw .decoding
            }
        case 400:
            throw .validation(reason: Self.reason(in: data, status: status))
        case 429, 500..<600:
            throw .server(status: status, reason: Self.reason(in: data, status: status),
                          retryAfter: Self.seconds(retryAfter: response.value(forHTTPHeaderField: "Retry-After")))
        default:
            throw .unexpectedStatus(status, reason: Self.reason(in: data, status: status))
        }
    }

    /// An error body: `{"error": true, "reason": "..."}` from the sign-up server,
    /// `{"error_message": "..."}` from the login server.
    private struct ErrorMessage: Decodable {
        let reason: String?
        let errorMessage: String?

        enum CodingKeys: String, CodingKey {
            case reason
            case errorMessage = "error_message"
        }
    }

    private static func reason(in data: Data, status: Int) -> String {
        let message = try? JSONDecoder().decode(ErrorMessage.self, from: data)
        return message?.reason ?? message?.errorMessage ?? HTTPURLResponse.localizedString(forStatusCode: status)
    }

    /// `Retry-After` in seconds: delay-seconds (`17`) or an HTTP date (`Sun, 06 Nov 1994 08:49:37 GMT`).
    private static func seconds(retryAfter value: String?) -> TimeInterval? {
        guard let value else { return nil }
        if let seconds = TimeInterval(value) { return max(0, seconds) }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.date(from: value).map { max(0, $0.timeIntervalSinceNow) }
    }
}
