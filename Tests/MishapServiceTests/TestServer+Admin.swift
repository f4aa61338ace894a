import Foundation
import MishapTestSupport
import Testing

extension TestServer {
    /// `GET` with an optional session header.
    func get(_ pathAndQuery: String, session: String? = nil) async throws -> ClientResponse {
        try await send("GET", pathAndQuery, headers: session.map { ["X-Mishap-Session": $0] } ?? [:])
    }

    /// An admin call that must answer 200 with a JSON object.
    func admin(_ pathAndQuery: String, method: String = "GET",
               sourceLocation: SourceLocation = #_sourceLocation) async throws -> [String: Any] {
        let response = try await send(method, "/__mishap/" + pathAndQuery)
        #expect(response.status == 200, "\(method) /__mishap/\(pathAndQuery): \(response.text)", sourceLocation: sourceLocation)
        #expect(response.header("Content-Type") == "application/json; charset=utf-8", sourceLocation: sourceLocation)
        return try #require(response.json, "not a JSON object: \(response.text)", sourceLocation: sourceLocation)
    }

    /// The journal entries `GET /__mishap/requests?QUERY` returns.
    func journal(_ query: String = "", sourceLocation: SourceLocation = #_sourceLocation) async throws -> [[String: Any]] {
        let answer = try await admin("requests" + (query.isEmpty ? "" : "?" + query), sourceLocation: sourceLocation)
        return try #require(answer["requests"] as? [[String: Any]], sourceLocation: sourceLocation)
    }
}
