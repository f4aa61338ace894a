import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `POST /token` answered (RFC 6749 section 5.1).
struct Tokens: Decodable, Equatable, Sendable {
    let accessToken: String
    let tokenType: String
    let expiresIn: Int
    let refreshToken: String

    enum CodingKeys: String, CodingKey {
        case accessToken = "access_token"
        case tokenType = "token_type"
        case expiresIn = "expires_in"
        case refreshToken = "refresh_token"
    }
}

/// `GET /me` answered.
struct Profile: Decodable, Equatable, Sendable {
    let userID: String
    let email: String

    enum CodingKeys: String, CodingKey {
        case userID = "user_id"
        case email
    }
}

/// What the account screens show.
enum AccountError: Error, Equatable {
    /// Signed out: the refresh token was refused (`invalid_grant`), or nobody signed in. The app
    /// shows the sign-in screen.
    case loggedOut
    /// The refresh itself failed (a 5xx, a broken connection): the tokens are kept, the screen
    /// shows an error and may try again later.
    case refreshFailed
    /// Still 401 after one refresh: given up, with no loop.
    case unauthorized
    /// Wrong user name or password.
    case invalidCredentials
    case unexpectedStatus(Int)
    case transport(URLError.Code)
}

/// The tokens of the user signed in, and the one refresh in flight: however many requests find
/// the access token expired at once, they wait for a single refresh (the pattern every app
/// with OAuth needs, and the bug when it is missing).
actor TokenStore {
    private(set) var tokens: Tokens?
    private var refreshing: Task<Tokens, Error>?

    func store(_ tokens: Tokens?) {
        self.tokens = tokens
    }

    /// Tokens newer than the access token `stale`: the current ones when another request has
    /// refreshed already, else those of the one refresh in flight, started here if none is.
    func tokens(replacing stale: String, refresh: @escaping @Sendable (String) async throws -> Tokens) async throws -> Tokens {
        guard let current = tokens else { throw AccountError.loggedOut }
        if current.accessToken != stale { return current }
        if let refreshing { return try await refreshing.value }
        let task = Task { try await refresh(current.refreshToken) }
        refreshing = task
        defer { refreshing = nil }
        do {
            let fresh = try await task.value
            tokens = fresh
            return fresh
        } catch AccountError.loggedOut {
            tokens = nil
            throw AccountError.loggedOut
        }
    }
}

/// The account API (`POST /token`, `GET /me`) behind a token-refreshing request layer.
///
/// A request answered 401 gets the access token refreshed once and is sent again once; a
/// refused refresh signs the user out, a failed one is an error, and neither is retried. With
/// `singleFlight` off, every request that meets a 401 refreshes on its own: the classic bug,
/// kept here so a test can show the journal catching it.
final class AccountClient: Sendable {
    let baseURL: URL
    let singleFlight: Bool
    let store = TokenStore()
    private let session: URLSession

    init(baseURL: URL, configuration: URLSessionConfiguration = .ephemeral, singleFlight: Bool = true) {
        self.baseURL = baseURL
        self.singleFlight = singleFlight
        session = URLSession(configuration: configuration)
    }

    deinit { session.finishTasksAndInvalidate() }

    var isSignedIn: Bool {
        get async { await store.tokens != nil }
    }

    /// Signs in with the password grant.
    func signIn(username: String, password: String) async throws(AccountError) {
        let (status, data) = try await postToken(["grant_type": "password", "username": username, "password": password])
        switch status {
        case 200: await store.store(try decode(Tokens.self, data))
        case 400: throw .invalidCredentials
        default: throw .unexpectedStatus(status)
        }
    }

    /// The user signed in, refreshing the access token once if it has expired.
    func profile() async throws(AccountError) -> Profile {
        guard let tokens = await store.tokens else { throw .loggedOut }
        let (status, data) = try await get("/me", bearer: tokens.accessToken)
        if status == 200 { return try decode(Profile.self, data) }
        guard status == 401 else { throw .unexpectedStatus(status) }

        let fresh: Tokens
        do {
            if singleFlight {
                fresh = try await store.tokens(replacing: tokens.accessToken) { refreshToken in
                    try await self.refresh(refreshToken)
                }
            } else {
                do {
                    fresh = try await refresh(tokens.refreshToken)
                    await store.store(fresh)
                } catch .loggedOut {
                    await store.store(nil)
                    throw AccountError.loggedOut
                }
            }
        } catch let error as AccountError {
            throw error
        } catch {
            throw .refreshFailed
        }
        let (again, retried) = try await get("/me", bearer: fresh.accessToken)
        if again == 200 { return try decode(Profile.self, retried) }
        throw again == 401 ? .unauthorized : .unexpectedStatus(again)
    }

    /// New tokens for `refreshToken`; `.loggedOut` when the server refuses it.
    private func refresh(_ refreshToken: String) async throws(AccountError) -> Tokens {
        let status: Int
        let data: Data
        do {
            (status, data) = try await postToken(["grant_type": "refresh_token", "refresh_token": refreshToken])
        } catch .transport {
            throw .refreshFailed
        }
        switch status {
        case 200: return try decode(Tokens.self, data)
        case 400, 401: throw .loggedOut
        default: throw .refreshFailed
        }
    }

    // MARK: Sending

    private func postToken(_ fields: [String: String]) async throws(AccountError) -> (Int, Data) {
        var request = URLRequest(url: baseURL.appendingPathComponent("token"))
        request.httpMethod = "POST"
        request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        request.httpBody = fields.sorted { $0.key < $1.key }.map { key, value in
            "\(key)=\(value.addingPercentEncoding(withAllowedCharacters: allowed) ?? value)"
        }.joined(separator: "&").data(using: .utf8)
        return try await send(request)
    }

    private func get(_ path: String, bearer token: String) async throws(AccountError) -> (Int, Data) {
        var request = URLRequest(url: baseURL.appendingPathComponent(String(path.dropFirst())))
        request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        return try await send(request)
    }

    private func send(_ request: URLRequest) async throws(AccountError) -> (Int, Data) {
        do {
            let (data, response) = try await session.data(for: request)
            guard let response = response as? HTTPURLResponse else { throw AccountError.transport(.badServerResponse) }
            return (response.statusCode, data)
        } catch let error as URLError {
            throw .transport(error.code)
        } catch {
            throw .transport(.unknown)
        }
    }

    private func decode<T: Decodable>(_ type: T.Type, _ data: Data) throws(AccountError) -> T {
        do {
            return try JSONDecoder().decode(type, from: data)
        } catch {
            throw .unexpectedStatus(200)
        }
    }
}
