import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import MishapTestSupport
import Testing

/// The malformed payloads of the failure catalogue: each arrives as a successful response that a
/// client's decoding must reject.
@Suite struct PayloadTests {
    /// What the app decodes from `/isUserNameAvailable`.
    struct Availability: Decodable {
        let isAvailable: Bool
        let userName: String
    }

    /// What the app decodes from `/login`.
    struct LoginAnswer: Decodable {
        let user_id: String
        let token: String
    }

    /// Decodes `body` as the endpoint's success type; returns the error, recording an issue if
    /// it decoded.
    func decodingError(_ endpoint: FailureEndpoint, _ body: Data, sourceLocation: SourceLocation = #_sourceLocation) -> DecodingError? {
        do {
            switch endpoint {
            case .userName: _ = try JSONDecoder().decode(Availability.self, from: body)
            case .login: _ = try JSONDecoder().decode(LoginAnswer.self, from: body)
            }
            Issue.record("decoded: \(String(decoding: body, as: UTF8.self))", sourceLocation: sourceLocation)
            return nil
        } catch let error as DecodingError {
            return error
        } catch {
            Issue.record("not a DecodingError: \(error)", sourceLocation: sourceLocation)
            return nil
        }
    }

    @Test(arguments: FailureEndpoint.allCases)
    func wrongTypeFailsDecodingWithATypeMismatch(endpoint: FailureEndpoint) async throws {
        let server = try TestServer()
        let response = try await endpoint.send("wrongtype", to: server)
        #expect(response.status == 200)
        #expect(response.header("Content-Type") == jsonContentType)
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
        let error = decodingError(endpoint, response.body)
        guard case .typeMismatch? = error else {
            Issue.record("expected a type mismatch, got \(String(describing: error))")
            return
        }
    }

    @Test(arguments: FailureEndpoint.allCases)
    func truncatedJSONIsCutOff(endpoint: FailureEndpoint) async throws {
        let server = try TestServer()
        let response = try await endpoint.send("truncatedjson", to: server)
        #expect(response.status == 200)
        #expect(response.header("Content-Type") == jsonContentType)
        #expect(response.text == (endpoint == .userName ? #"{"isAvailable":true,"userNa"# : #"{"user_id":"123","tok"#))
        #expect(throws: (any Error).self) { try JSONSerialization.jsonObject(with: response.body) }
        let error = decodingError(endpoint, response.body)
        guard case .dataCorrupted? = error else {
            Issue.record("expected corrupted data, got \(String(describing: error))")
            return
        }
    }

    @Test(arguments: FailureEndpoint.allCases)
    func badUTF8IsNotUTF8(endpoint: FailureEndpoint) async throws {
        let server = try TestServer()
        let response = try await endpoint.send("badutf8", to: server)
        #expect(response.status == 200)
        #expect(response.header("Content-Type") == jsonContentType)
        let bytes = Array(response.body)
        #expect(bytes.firstRange(of: [0xFF, 0xFE]) != nil, "\(bytes)")
        #expect(String(validating: bytes, as: UTF8.self) == nil)
        let prefix = endpoint == .userName ? #"{"isAvailable":true,"userName":""# : #"{"user_id":"123","token":""#
        #expect(bytes == Array(prefix.utf8) + [0xFF, 0xFE, 0xC3] + Array(#""}"#.utf8))
        #expect(decodingError(endpoint, response.body) != nil)
    }

    @Test(arguments: FailureEndpoint.allCases)
    func captivePortalIsAnHTMLPage(endpoint: FailureEndpoint) async throws {
        let server = try TestServer()
        let response = try await endpoint.send("captiveportal", to: server)
        #expect(response.status == 200)
        #expect(response.header("Content-Type") == "text/html; charset=utf-8")
        #expect(response.text.contains("<html"))
        #expect(response.text.contains("Wi-Fi"))
        let html = try String(contentsOfFile: defaultScenariosDirectory + "/files/captive-portal.html", encoding: .utf8)
        #expect(response.text == html)
        #expect(decodingError(endpoint, response.body) != nil)
    }

    @Test(arguments: FailureEndpoint.allCases)
    func notJSONIsOKLabelledJSON(endpoint: FailureEndpoint) async throws {
        let server = try TestServer()
        let response = try await endpoint.send("notjson", to: server)
        #expect(response.status == 200)
        #expect(response.header("Content-Type") == jsonContentType)
        #expect(response.body == Data("OK".utf8))
        #expect(decodingError(endpoint, response.body) != nil)
    }

    @Test(arguments: FailureEndpoint.allCases)
    func emptyIsAnEmptyBody(endpoint: FailureEndpoint) async throws {
        let server = try TestServer()
        let response = try await endpoint.send("empty", to: server)
        #expect(response.status == 200)
        #expect(response.body.isEmpty, "\(response.text)")
        #expect(response.header("Content-Length") == "0")
        #expect(decodingError(endpoint, response.body) != nil)
        // On the wire too: a Content-Length of 0 and nothing after it.
        let raw = try server.connect()
        try endpoint.sendRaw("empty", on: raw)
        let head = try raw.readResponse(toHead: true)
        let (rest, end) = try raw.readPiecesToEnd()
        #expect(head.status == 200)
        #expect(head.header("Content-Length") == "0")
        #expect(rest.isEmpty)
        #expect(end == .closed)
    }

    @Test(arguments: FailureEndpoint.allCases)
    func illegalResponseLacksAField(endpoint: FailureEndpoint) async throws {
        let server = try TestServer()
        let response = endpoint == .userName
            ? try await server.send("GET", "/isUserNameAvailable?userName=illegalresponse")
            : try await server.post("/login", json: ["email": "illegalresponse@x.com", "password": "secret"])
        #expect(response.status == 200)
        #expect(response.text == (endpoint == .userName ? #"{"isAvailable":false}"# : #"{"user_id":"123"}"#))
        let error = decodingError(endpoint, response.body)
        guard case .keyNotFound(let key, _)? = error else {
            Issue.record("expected a missing key, got \(String(describing: error))")
            return
        }
        #expect(key.stringValue == (endpoint == .userName ? "userName" : "token"))
    }
}
