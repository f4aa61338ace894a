import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import MishapTestSupport
import Testing

// Helpers shared by the failure-catalogue suites (FaultTests, TimingTests, PayloadTests,
// StatusFailureTests, SessionTests).

/// Where a catalogue failure is triggered: by username on `GET /isUserNameAvailable`, or by the
/// email's local part (`reset@x.com`, with a valid password) on `POST /login`.
enum FailureEndpoint: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case userName
    case login

    var testDescription: String { self == .userName ? "GET /isUserNameAvailable" : "POST /login" }

    /// The email `trigger` stands for on `/login`.
    static func email(_ trigger: String) -> String { "\(trigger)@x.com" }

    /// The JSON body `/login` gets for `trigger`.
    static func loginBody(_ trigger: String) -> [UInt8] {
        Array(#"{"email":"\#(email(trigger))","password":"secret"}"#.utf8)
    }

    /// The body a fault that carries a response (truncate, …) would have sent in full.
    func intendedBody(_ trigger: String) -> [UInt8] {
        switch self {
        case .userName: Array(#"{"isAvailable":true,"userName":"\#(trigger)"}"#.utf8)
        case .login: Array(#"{"user_id":"123","token":"c7d83mdla_3ms"}"#.utf8)
        }
    }

    /// The field holding the error message in this endpoint's error bodies.
    var reasonKey: String { self == .userName ? "reason" : "error_message" }

    /// Sends `trigger` with URLSession to a server of its own, serving the default scenarios.
    func send(_ trigger: String) async throws -> ClientResponse {
        try await send(trigger, to: TestServer())
    }

    /// Sends `trigger` with URLSession.
    func send(_ trigger: String, to server: TestServer, headers: [String: String] = [:],
              timeout: TimeInterval? = nil) async throws -> ClientResponse {
        switch self {
        case .userName:
            try await server.send("GET", "/isUserNameAvailable?userName=\(trigger.queryEncoded)", headers: headers, timeout: timeout)
        case .login:
            try await server.send("POST", "/login", body: Data(Self.loginBody(trigger)),
                                  headers: headers.merging(["Content-Type": "application/json"]) { a, _ in a }, timeout: timeout)
        }
    }

    /// Sends `trigger` on a raw connection of its own: the response's head, every byte after
    /// it, and how the stream ended.
    func rawAnswer(_ trigger: String, on server: TestServer) throws
        -> (head: ClientResponse, rest: [UInt8], end: RawHTTPConnection.Received) {
        let connection = try server.connect(timeoutSeconds: 5)
        try sendRaw(trigger, on: connection)
        let head = try connection.readResponse(toHead: true)
        let (rest, end) = try connection.readUntilEnd()
        return (head, rest, end)
    }

    /// Sends `trigger` on a raw connection (with `Connection: close`, so a response that does not
    /// break the connection still ends in a close).
    func sendRaw(_ trigger: String, on connection: RawHTTPConnection, headers: [(String, String)] = []) throws {
        switch self {
        case .userName:
            try connection.sendRequest("GET", "/isUserNameAvailable?userName=\(trigger.queryEncoded)",
                                       headers: headers + [("Connection", "close")])
        case .login:
            try connection.sendRequest("POST", "/login", headers: headers + [("Content-Type", "application/json"), ("Connection", "close")],
                                       body: Self.loginBody(trigger))
        }
    }
}

extension TestServer {
    /// The sequence of statuses of `count` requests, one after another.
    func statuses(_ count: Int, _ pathAndQuery: String, headers: [String: String] = [:]) async throws -> [Int] {
        var statuses: [Int] = []
        for _ in 0..<count { statuses.append(try await send("GET", pathAndQuery, headers: headers).status) }
        return statuses
    }
}

/// The `URLError` a URLSession request fails with; records an issue (and returns nil) when it
/// succeeds or fails some other way.
func urlError(sourceLocation: SourceLocation = #_sourceLocation,
              _ request: () async throws -> ClientResponse) async -> URLError? {
    await caught(URLError.self, sourceLocation: sourceLocation, describing: {
        "status \($0.status) with \($0.body.count) bytes: \($0.text.prefix(200))"
    }, request)
}

/// The error of type `E` that `body` throws; records an issue (and returns nil) when `body`
/// returns (`describe` tells what) or throws another error.
func caught<E: Error, T>(_: E.Type, sourceLocation: SourceLocation = #_sourceLocation, describing describe: (T) -> String,
                         _ body: () async throws -> T) async -> E? {
    do {
        let value = try await body()
        Issue.record("expected a \(E.self), got \(describe(value))", sourceLocation: sourceLocation)
        return nil
    } catch let error as E {
        return error
    } catch {
        Issue.record("expected a \(E.self), got \(type(of: error)): \(error)", sourceLocation: sourceLocation)
        return nil
    }
}

/// A chunked body decoded as far as it goes.
struct ChunkedBody {
    /// The payload of the complete chunks.
    var payload: [UInt8] = []
    /// Whether the terminating `0\r\n\r\n` was seen.
    var terminated = false

    init(_ bytes: [UInt8]) {
        var rest = bytes[...]
        let crlf = Array("\r\n".utf8)
        while let lineEnd = rest.firstRange(of: crlf) {
            let sizeText = String(decoding: rest[..<lineEnd.lowerBound], as: UTF8.self).split(separator: ";").first ?? ""
            guard let size = Int(sizeText.trimmingCharacters(in: .whitespaces), radix: 16) else { return }
            let dataStart = lineEnd.upperBound
            if size == 0 {
                terminated = rest[dataStart...].starts(with: crlf)
                return
            }
            guard rest.distance(from: dataStart, to: rest.endIndex) >= size + 2 else { return }
            let dataEnd = rest.index(dataStart, offsetBy: size)
            payload += rest[dataStart..<dataEnd]
            rest = rest[rest.index(dataEnd, offsetBy: 2)...]
        }
    }
}
