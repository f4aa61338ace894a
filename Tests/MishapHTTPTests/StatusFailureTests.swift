import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import MishapTestSupport
import Testing

/// The status-code failures of the catalogue, on both endpoints, as URLSession reports them.
@Suite(.onBlockingThreads) struct StatusFailureTests {
    /// Reads an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`).
    static func httpDate(_ text: String) -> Date? {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        return formatter.date(from: text)
    }

    func expectJSONError(_ response: ClientResponse, _ endpoint: FailureEndpoint, userName: String, login: String,
                         sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(response.header("Content-Type") == jsonContentType, sourceLocation: sourceLocation)
        let reason = response.json?[endpoint.reasonKey] as? String
        #expect(reason == (endpoint == .userName ? userName : login), "\(response.text)", sourceLocation: sourceLocation)
        if endpoint == .userName {
            #expect(response.json?["error"] as? Bool == true, sourceLocation: sourceLocation)
        }
    }

    /// A status failure: its trigger, its status, the headers that come with it, and the error
    /// message of each endpoint.
    struct StatusFailure: Sendable, CustomTestStringConvertible {
        let trigger: String
        let status: Int
        var headers: [String: String] = [:]
        let userName: String
        let login: String

        var testDescription: String { "\(trigger) → \(status)" }
    }

    static let failures = [
        StatusFailure(trigger: "ratelimited", status: 429, headers: ["Retry-After": "30"],
                      userName: "Too many requests", login: "Too many login attempts."),
        StatusFailure(trigger: "unavailableseconds", status: 503, headers: ["Retry-After": "120"],
                      userName: "Service unavailable", login: "Service unavailable."),
        StatusFailure(trigger: "unauthorized", status: 401, headers: ["WWW-Authenticate": #"Bearer realm="mishap", error="invalid_token""#],
                      userName: "Unauthorized", login: "Unauthorized."),
        StatusFailure(trigger: "requesttimeout", status: 408, userName: "Request timeout", login: "Request timeout."),
        StatusFailure(trigger: "badgateway", status: 502, userName: "Bad gateway", login: "Bad gateway."),
        StatusFailure(trigger: "gatewaytimeout", status: 504, userName: "Gateway timeout", login: "Gateway timeout."),
    ]

    @Test(arguments: FailureEndpoint.allCases, failures)
    func statusFailureAnswersItsStatusHeadersAndError(endpoint: FailureEndpoint, failure: StatusFailure) async throws {
        let response = try await endpoint.send(failure.trigger)
        #expect(response.status == failure.status)
        for (name, value) in failure.headers {
            #expect(response.header(name) == value, "\(name)")
        }
        expectJSONError(response, endpoint, userName: failure.userName, login: failure.login)
    }

    /// A status failure whose `Retry-After` is an HTTP-date `ahead` seconds after the response.
    struct DatedFailure: Sendable, CustomTestStringConvertible {
        let trigger: String
        let status: Int
        let ahead: Double
        let userName: String
        let login: String

        var testDescription: String { "\(trigger) → \(status), \(Int(ahead)) s" }
    }

    @Test(arguments: FailureEndpoint.allCases, [
        DatedFailure(trigger: "unavailable", status: 503, ahead: 60, userName: "Service unavailable", login: "Service unavailable."),
        DatedFailure(trigger: "ratelimiteddate", status: 429, ahead: 30, userName: "Too many requests", login: "Too many login attempts."),
    ])
    func datedFailureHasAnHTTPDateAhead(endpoint: FailureEndpoint, failure: DatedFailure) async throws {
        let response = try await endpoint.send(failure.trigger)
        let now = Date()
        #expect(response.status == failure.status)
        expectJSONError(response, endpoint, userName: failure.userName, login: failure.login)
        let retryAfter = try #require(response.header("Retry-After"))
        #expect(retryAfter.wholeMatch(of: /[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT/) != nil, "\(retryAfter)")
        let date = try #require(Self.httpDate(retryAfter), "Retry-After '\(retryAfter)' is not an HTTP-date")
        let ahead = date.timeIntervalSince(now)
        #expect((failure.ahead - 10...failure.ahead + 10).contains(ahead), "Retry-After is \(ahead) s ahead: \(retryAfter)")
        // `ahead` seconds after the response's own Date.
        if let sent = response.header("Date").flatMap(Self.httpDate) {
            #expect(abs(date.timeIntervalSince(sent) - failure.ahead) <= 1, "Date \(response.header("Date")!), Retry-After \(retryAfter)")
        }
    }
}
