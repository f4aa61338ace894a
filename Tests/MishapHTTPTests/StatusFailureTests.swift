import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import MishapTestSupport
import Testing

/// The status-code failures of the catalogue, on both endpoints, as URLSession reports them.
@Suite struct StatusFailureTests {
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

    @Test(arguments: FailureEndpoint.allCases)
    func rateLimitedIs429WithRetryAfter30(endpoint: FailureEndpoint) async throws {
        let server = try TestServer()
        let response = try await endpoint.send("ratelimited", to: server)
        #expect(response.status == 429)
        #expect(response.header("Retry-After") == "30")
        expectJSONError(response, endpoint, userName: "Too many requests", login: "Too many login attempts.")
    }

    @Test(arguments: FailureEndpoint.allCases)
    func unavailableIs503WithAnHTTPDateAMinuteAhead(endpoint: FailureEndpoint) async throws {
        let server = try TestServer()
        let response = try await endpoint.send("unavailable", to: server)
        let now = Date()
        #expect(response.status == 503)
        expectJSONError(response, endpoint, userName: "Service unavailable", login: "Service unavailable.")
        let retryAfter = try #require(response.header("Retry-After"))
        #expect(retryAfter.wholeMatch(of: /[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT/) != nil, "\(retryAfter)")
        let date = try #require(Self.httpDate(retryAfter), "Retry-After '\(retryAfter)' is not an HTTP-date")
        let ahead = date.timeIntervalSince(now)
        #expect((50...70).contains(ahead), "Retry-After is \(ahead) s ahead: \(retryAfter)")
        // 60 s after the response's own Date.
        if let sent = response.header("Date").flatMap(Self.httpDate) {
            #expect(abs(date.timeIntervalSince(sent) - 60) <= 1, "Date \(response.header("Date")!), Retry-After \(retryAfter)")
        }
    }

    @Test(arguments: FailureEndpoint.allCases)
    func rateLimitedDateIs429WithAnHTTPDateHalfAMinuteAhead(endpoint: FailureEndpoint) async throws {
        let server = try TestServer()
        let response = try await endpoint.send("ratelimiteddate", to: server)
        let now = Date()
        #expect(response.status == 429)
        expectJSONError(response, endpoint, userName: "Too many requests", login: "Too many login attempts.")
        let retryAfter = try #require(response.header("Retry-After"))
        let date = try #require(Self.httpDate(retryAfter), "Retry-After '\(retryAfter)' is not an HTTP-date")
        #expect((20...40).contains(date.timeIntervalSince(now)), "\(retryAfter)")
    }

    @Test(arguments: FailureEndpoint.allCases)
    func unavailableSecondsIs503WithRetryAfter120(endpoint: FailureEndpoint) async throws {
        let server = try TestServer()
        let response = try await endpoint.send("unavailableseconds", to: server)
        #expect(response.status == 503)
        #expect(response.header("Retry-After") == "120")
        expectJSONError(response, endpoint, userName: "Service unavailable", login: "Service unavailable.")
    }

    @Test(arguments: FailureEndpoint.allCases)
    func unauthorizedIs401WithABearerChallenge(endpoint: FailureEndpoint) async throws {
        let server = try TestServer()
        let response = try await endpoint.send("unauthorized", to: server)
        #expect(response.status == 401)
        let challenge = try #require(response.header("WWW-Authenticate"))
        #expect(challenge.hasPrefix("Bearer"))
        #expect(challenge == #"Bearer realm="mishap", error="invalid_token""#)
        expectJSONError(response, endpoint, userName: "Unauthorized", login: "Unauthorized.")
    }

    @Test(arguments: FailureEndpoint.allCases)
    func requestTimeoutIs408(endpoint: FailureEndpoint) async throws {
        let server = try TestServer()
        let response = try await endpoint.send("requesttimeout", to: server)
        #expect(response.status == 408)
        expectJSONError(response, endpoint, userName: "Request timeout", login: "Request timeout.")
    }

    @Test(arguments: FailureEndpoint.allCases)
    func badGatewayIs502(endpoint: FailureEndpoint) async throws {
        let server = try TestServer()
        let response = try await endpoint.send("badgateway", to: server)
        #expect(response.status == 502)
        expectJSONError(response, endpoint, userName: "Bad gateway", login: "Bad gateway.")
    }

    @Test(arguments: FailureEndpoint.allCases)
    func gatewayTimeoutIs504(endpoint: FailureEndpoint) async throws {
        let server = try TestServer()
        let response = try await endpoint.send("gatewaytimeout", to: server)
        #expect(response.status == 504)
        expectJSONError(response, endpoint, userName: "Gateway timeout", login: "Gateway timeout.")
    }

    @Test func statusFailuresNeedAValidLogin() async throws {
        // The triggers sit below the input checks: a short password is still "too short".
        let server = try TestServer()
        let response = try await server.post("/login", json: ["email": "ratelimited@x.com", "password": "abc"])
        #expect(response.status == 400)
        #expect(response.json?["error_message"] as? String == "Password is too short.")
    }
}
