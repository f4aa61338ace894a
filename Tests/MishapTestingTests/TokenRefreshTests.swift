import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import MishapTesting
import MishapTestSupport
import Testing

/// The default token flow (`POST /token`, `GET /me`) driven by a seed-style client with a
/// token-refreshing request layer, each test in its own session of one shared server: expiry,
/// one refresh, one retry; a refused or failed refresh and no loop; parallel 401s and one
/// refresh; sessions that never see each other's tokens.
@Suite(.onBlockingThreads) struct TokenRefreshTests {
    static let shared: RunningMishap = try! Mishap.start(scenarios: defaultScenarios)

    static func client(in session: MishapSession, singleFlight: Bool = true, timeout: TimeInterval = 30) -> AccountClient {
        let configuration = session.configuration
        configuration.timeoutIntervalForRequest = timeout
        return AccountClient(baseURL: shared.baseURL, configuration: configuration, singleFlight: singleFlight)
    }

    /// What the session's requests were answered with, as `METHOD /path rule status`.
    static func answers(_ session: MishapSession) -> [String] {
        shared.requests(session: session).map { "\($0.method) \($0.path) \($0.rule ?? "-") \($0.status.map(String.init) ?? $0.fault ?? "-")" }
    }

    @Test func anExpiredTokenIsRefreshedOnceAndTheRequestRetriedOnce() async throws {
        let session = Self.shared.session()
        let client = Self.client(in: session)
        try await client.signIn(username: "john@doe.com", password: "onlyjohnknowsme")
        let first = try #require(await client.store.tokens)
        for _ in 1...4 {
            #expect(try await client.profile() == Profile(userID: "123", email: "john@doe.com"))
        }
        #expect(Self.answers(session) == [
            "POST /token signIn 200",
            "GET /me me 200", "GET /me me 200", "GET /me me 200",
            "GET /me expired 401",   // the 4th use of the token
            "POST /token refresh 200",
            "GET /me me 200",
        ])
        let second = try #require(await client.store.tokens)
        #expect(second.accessToken != first.accessToken && second.refreshToken != first.refreshToken)
        #expect(second.expiresIn == 60 && second.tokenType == "Bearer")
        // The state the refresh left, and what its rule changed.
        let state = Self.shared.state(session: session)
        #expect(state["accessToken"] == .string(second.accessToken))
        #expect(state["replacedToken"] == .string(first.accessToken))
        #expect(state["meCalls"] == 1)
        let refresh = try #require(Self.shared.requests(session: session, rule: "refresh").first)
        let change = try #require(refresh.stateChanges.first { $0.name == "accessToken" })
        #expect(change.from == .string(first.accessToken) && change.to == .string(second.accessToken))
        // The replaced access token is refused as such.
        let status = try await Self.statusAndChallenge(session, bearer: first.accessToken)
        #expect(status.0 == 401)
        #expect(status.1 == #"Bearer error="invalid_token", error_description="The access token was replaced""#)
    }

    @Test func anExpiredTokenAfterItsSixtySecondsIsRefreshedToo() async throws {
        let session = Self.shared.session()
        let client = Self.client(in: session)
        try await client.signIn(username: "john@doe.com", password: "onlyjohnknowsme")
        // The 60 s are over: what the expiry of accessTokenLive does, at once.
        try Self.shared.setState(["accessTokenLive": false], session: session)
        #expect(try await client.profile().email == "john@doe.com")
        #expect(Self.answers(session).suffix(3) == ["GET /me expired 401", "POST /token refresh 200", "GET /me me 200"])
    }

    @Test func aRefusedRefreshLogsOutWithoutALoop() async throws {
        let session = Self.shared.session()
        let client = Self.client(in: session)
        try await client.signIn(username: "john@doe.com", password: "onlyjohnknowsme")
        // The server forgot the refresh token (revoked), and the access token is used up.
        try Self.shared.setState(["refreshToken": "revoked", "meCalls": 3], session: session)
        await #expect(throws: AccountError.loggedOut) { try await client.profile() }
        #expect(await client.isSignedIn == false)
        await #expect(throws: AccountError.loggedOut) { try await client.profile() }
        #expect(Self.answers(session) == ["POST /token signIn 200", "GET /me expired 401", "POST /token refreshInvalid 400"])
    }

    @Test(arguments: [("refreshfails@doe.com", "refreshServerError 500"), ("refreshresets@doe.com", "refreshReset reset")])
    func aFailedRefreshIsAnErrorWithoutALoop(user: String, answer: String) async throws {
        let session = Self.shared.session()
        // On Linux, URLSession waits out its timeout when a POST's reused connection is reset
        // (see FaultTests in MishapHTTPTests): a short one keeps the reset case quick.
        let client = Self.client(in: session, timeout: 5)
        try await client.signIn(username: user, password: "onlyjohnknowsme")
        try Self.shared.setState(["meCalls": 3], session: session)
        await #expect(throws: AccountError.refreshFailed) { try await client.profile() }
        #expect(await client.isSignedIn, "a failed refresh keeps the tokens")
        // After the reset, URLSession's libcurl may re-send the POST's head on its reused
        // connection and close it before the body: journaled as such (`bodyIncomplete`), never
        // answered, and no retry of the client's own.
        let answered = Self.shared.requests(session: session).filter { !$0.bodyIncomplete }
        #expect(answered.dropFirst().map { "\($0.method) \($0.path) \($0.rule ?? "-") \($0.status.map(String.init) ?? $0.fault ?? "-")" }
            == ["GET /me expired 401", "POST /token \(answer)"])
    }

    @Test func parallelRequestsThatAllGet401ShareOneRefresh() async throws {
        let session = Self.shared.session()
        let client = Self.client(in: session)
        try await client.signIn(username: "john@doe.com", password: "onlyjohnknowsme")
        try Self.shared.setState(["meCalls": 3], session: session)
        try await withThrowingTaskGroup(of: Profile.self) { group in
            for _ in 1...3 { group.addTask { try await client.profile() } }
            for try await profile in group { #expect(profile.userID == "123") }
        }
        let requests = Self.shared.requests(session: session)
        // Usually all three meet the old token; on a slow machine (the sanitizers) the refresh
        // may finish before the last is sent, which then carries the new token. Either way:
        // one refresh, and every request answered.
        let expired = requests.filter { $0.rule == "expired" }.count
        #expect((1...3).contains(expired), "\(Self.answers(session))")
        #expect(requests.filter { $0.queryValue("x") == nil && $0.path == "/token" && $0.rule?.hasPrefix("refresh") == true }.count == 1,
                "\(Self.answers(session))")
        #expect(requests.filter { $0.rule == "me" }.count == 3)
    }

    /// The classic bug, caught: a layer that refreshes once per 401 sends a refresh for each
    /// request that met the old token; all but the first are refused (the refresh token was
    /// replaced), and the user is signed out for nothing. The journal shows it.
    @Test func theJournalCatchesALayerThatRefreshesForEach401() async throws {
        let session = Self.shared.session()
        let client = Self.client(in: session, singleFlight: false)
        try await client.signIn(username: "john@doe.com", password: "onlyjohnknowsme")
        let stale = try #require(await client.store.tokens).accessToken
        try Self.shared.setState(["meCalls": 3], session: session)
        await withTaskGroup(of: Void.self) { group in
            for _ in 1...5 { group.addTask { _ = try? await client.profile() } }
        }
        let requests = Self.shared.requests(session: session)
        let staleAnswers = requests.filter { $0.path == "/me" && $0.header("Authorization") == "Bearer \(stale)" }.count
        let refreshes = requests.filter { $0.path == "/token" && $0.rule != "signIn" }
        #expect(staleAnswers >= 1)
        #expect(refreshes.count == staleAnswers, "one refresh per 401: \(Self.answers(session))")
        if staleAnswers > 1 {
            #expect(refreshes.filter { $0.rule == "refreshInvalid" }.count == staleAnswers - 1)
        }
    }

    @Test func fiftySessionsInParallelNeverSeeEachOthersTokens() async throws {
        let sessions = (0..<50).map { Self.shared.session("tokens-\($0)-\(UUID().uuidString)") }
        let tokens = try await withThrowingTaskGroup(of: (Int, [String]).self) { group in
            for (index, session) in sessions.enumerated() {
                group.addTask {
                    let client = Self.client(in: session)
                    try await client.signIn(username: "john@doe.com", password: "onlyjohnknowsme")
                    let first = try #require(await client.store.tokens)
                    for _ in 1...4 { _ = try await client.profile() }
                    let second = try #require(await client.store.tokens)
                    return (index, [first.accessToken, first.refreshToken, second.accessToken, second.refreshToken])
                }
            }
            var byIndex = [[String]](repeating: [], count: sessions.count)
            for try await (index, issued) in group { byIndex[index] = issued }
            return byIndex
        }
        #expect(Set(tokens.flatMap { $0 }).count == 200, "every token issued is new")
        for (index, session) in sessions.enumerated() {
            #expect(Self.answers(session).map { $0.split(separator: " ").suffix(2).joined(separator: " ") }
                    == ["signIn 200", "me 200", "me 200", "me 200", "expired 401", "refresh 200", "me 200"], "session \(index)")
            #expect(Self.shared.state(session: session)["accessToken"] == .string(tokens[index][2]))
        }
        // One session's token means nothing in another.
        let (status, _) = try await Self.statusAndChallenge(sessions[1], bearer: tokens[0][2])
        #expect(status == 401)
        #expect(Self.shared.requests(session: sessions[1]).last?.rule == "unknownToken")
    }

    static func statusAndChallenge(_ session: MishapSession, bearer: String) async throws -> (Int, String?) {
        var request = URLRequest(url: shared.url("/me"))
        session.apply(to: &request)
        request.setValue("Bearer \(bearer)", forHTTPHeaderField: "Authorization")
        let (_, response) = try await URLSession(configuration: .ephemeral).data(for: request)
        let http = try #require(response as? HTTPURLResponse)
        return (http.statusCode, http.value(forHTTPHeaderField: "WWW-Authenticate"))
    }
}
