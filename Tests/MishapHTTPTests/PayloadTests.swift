import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import MishapTestSupport
import Testing

/// The malformed payloads of the failure catalogue: each arrives as a successful response that a
/// client's decoding must reject.
@Suite(.onBlockingThreads) struct PayloadTests {
    /// What the app decodes from `/isUserNameAvailable`.
    struct Availability: Decodable {
        let isAvailable: Bool
        let userName: String
    }

    /// What the app decodes from `/login`.
    struct LoginAnswer: Decodable {
        // swift-format-ignore: AlwaysUseLowerCamelCase
        // (the answer's JSON key, decoded as the app does)
        let user_id: String
        let token: String
    }

    /// `trigger` sent to a server of its own: a 200 (with `contentType`, when given).
    func payload(_ trigger: String, _ endpoint: FailureEndpoint, contentType: String? = jsonContentType,
                 sourceLocation: SourceLocation = #_sourceLocation) async throws -> ClientResponse {
        let response = try await endpoint.send(trigger)
        #expect(response.status == 200, sourceLocation: sourceLocation)
        if let contentType {
            #expect(response.header("Content-Type") == contentType, sourceLocation: sourceLocation)
        }
        return response
    }

    /// Checks that `body` fails to decode as the endpoint's success type, with an error that
    /// `matches` (`kind` names it in the failure message).
    func expectDecodingError(_ endpoint: FailureEndpoint, _ body: Data, _ kind: String = "any error",
                             sourceLocation: SourceLocation = #_sourceLocation,
                             matches: (DecodingError) -> Bool = { _ in true }) async {
        let decode: () throws -> Void = {
            switch endpoint {
            case .userName: _ = try JSONDecoder().decode(Availability.self, from: body)
            case .login: _ = try JSONDecoder().decode(LoginAnswer.self, from: body)
            }
        }
        let error = await caught(DecodingError.self, sourceLocation: sourceLocation, describing: { _ in
            "a decoded \(String(decoding: body, as: UTF8.self))"
        }, decode)
        if let error, !matches(error) {
            Issue.record("expected \(kind), got \(error)", sourceLocation: sourceLocation)
        }
    }

    @Test(arguments: FailureEndpoint.allCases)
    func wrongTypeFailsDecodingWithATypeMismatch(endpoint: FailureEndpoint) async throws {
        let response = try await payload("wrongtype", endpoint)
        let json = try #require(response.json, "\(response.text)")
        switch endpoint {
        case .userName:
            #expect(response.text == #"{"isAvailable":"yes","userName":42}"#)
            #expect(json["isAvailable"] as? String == "yes")
            #expect(!(json["userName"] is String))
            #expect((json["userName"] as? NSNumber)?.intValue == 42)
        case .login:
            #expect(response.text == #"{"user_id":123,"token":true}"#)
            #expect(!(json["user_id"] is String))
            #expect((json["user_id"] as? NSNumber)?.intValue == 123)
            #expect(json["token"] as? Bool == true)
        }
        await expectDecodingError(endpoint, response.body, "a type mismatch") {
            if case .typeMismatch = $0 { true } else { false }
        }
    }

    @Test(arguments: FailureEndpoint.allCases)
    func truncatedJSONIsCutOff(endpoint: FailureEndpoint) async throws {
        let response = try await payload("truncatedjson", endpoint)
        #expect(response.text == (endpoint == .userName ? #"{"isAvailable":true,"userNa"# : #"{"user_id":"123","tok"#))
        #expect(throws: (any Error).self) { try JSONSerialization.jsonObject(with: response.body) }
        await expectDecodingError(endpoint, response.body, "corrupted data") {
            if case .dataCorrupted = $0 { true } else { false }
        }
    }

    @Test(arguments: FailureEndpoint.allCases)
    func badUTF8IsNotUTF8(endpoint: FailureEndpoint) async throws {
        let response = try await payload("badutf8", endpoint)
        let bytes = Array(response.body)
        #expect(bytes.firstRange(of: [0xFF, 0xFE]) != nil, "\(bytes)")
        #expect(String(validating: bytes, as: UTF8.self) == nil)
        let prefix = endpoint == .userName ? #"{"isAvailable":true,"userName":""# : #"{"user_id":"123","token":""#
        #expect(bytes == Array(prefix.utf8) + [0xFF, 0xFE, 0xC3] + Array(#""}"#.utf8))
        await expectDecodingError(endpoint, response.body)
    }

    @Test(arguments: FailureEndpoint.allCases)
    func captivePortalIsAnHTMLPage(endpoint: FailureEndpoint) async throws {
        let response = try await payload("captiveportal", endpoint, contentType: "text/html; charset=utf-8")
        #expect(response.text.contains("<html"))
        #expect(response.text.contains("Wi-Fi"))
        let html = try String(contentsOfFile: defaultScenariosDirectory + "/files/captive-portal.html", encoding: .utf8)
        #expect(response.text == html)
        await expectDecodingError(endpoint, response.body)
    }

    @Test(arguments: FailureEndpoint.allCases)
    func notJSONIsOKLabelledJSON(endpoint: FailureEndpoint) async throws {
        let response = try await payload("notjson", endpoint)
        #expect(response.body == Data("OK".utf8))
        await expectDecodingError(endpoint, response.body)
    }

    @Test(arguments: FailureEndpoint.allCases)
    func emptyIsAnEmptyBody(endpoint: FailureEndpoint) async throws {
        let response = try await payload("empty", endpoint, contentType: nil)
        #expect(response.body.isEmpty, "\(response.text)")
        #expect(response.header("Content-Length") == "0")
        await expectDecodingError(endpoint, response.body)
        // On the wire too: a Content-Length of 0 and nothing after it.
        let (head, rest, end) = try endpoint.rawAnswer("empty", on: TestServer())
        #expect(head.status == 200)
        #expect(head.header("Content-Length") == "0")
        #expect(rest.isEmpty)
        #expect(end == .closed)
    }

    @Test(arguments: FailureEndpoint.allCases)
    func illegalResponseLacksAField(endpoint: FailureEndpoint) async throws {
        let response = try await payload("illegalresponse", endpoint)
        #expect(response.text == (endpoint == .userName ? #"{"isAvailable":false}"# : #"{"user_id":"123"}"#))
        let key = endpoint == .userName ? "userName" : "token"
        await expectDecodingError(endpoint, response.body, "a missing '\(key)'") {
            if case .keyNotFound(let missing, _) = $0 { missing.stringValue == key } else { false }
        }
    }
}
