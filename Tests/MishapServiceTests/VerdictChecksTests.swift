import MishapEngine
@testable import MishapService
import Testing

/// The checks on attempts made by hand, where timing matters and a real client cannot be made
/// to be late on purpose: the expired token arriving after a refresh.
@Suite struct VerdictChecksTests {
    static let invalidToken = ResponsePlan(status: 401, headers: [Field("WWW-Authenticate", #"Bearer error="invalid_token""#)],
                                           bookkeeping: ResponsePlan.Bookkeeping(endpoint: "GET /me", rule: "expired"))

    static func me(_ id: UInt64, at time: Int64, token: String, plan: ResponsePlan = invalidToken) -> ClientAttempt {
        ClientAttempt(id: id, time: time, request: Request(method: "GET", path: "/me", headers: [Field("Authorization", "Bearer " + token)]),
                      plan: plan)
    }

    static func refresh(_ id: UInt64, at time: Int64, token: String) -> ClientAttempt {
        ClientAttempt(id: id, time: time,
                      request: Request(method: "POST", path: "/token",
                                       headers: [Field("Content-Type", "application/x-www-form-urlencoded")],
                                       body: Array("grant_type=refresh_token&refresh_token=\(token)".utf8)),
                      plan: ResponsePlan(status: 200, bookkeeping: ResponsePlan.Bookkeeping(endpoint: "POST /token", rule: "refresh")))
    }

    static let ok = ResponsePlan(status: 200, bookkeeping: ResponsePlan.Bookkeeping(endpoint: "GET /me", rule: "me"))

    static func oneRefresh(_ attempts: [ClientAttempt]) -> VerdictCheck {
        VerdictChecks(attempts: attempts, options: VerdictOptions(), now: 100_000).oneRefresh()
    }

    @Test func theExpiredTokenJustAfterTheRefreshIsARequestOnItsWay() {
        let check = Self.oneRefresh([
            Self.me(1, at: 1_000, token: "old"), Self.me(2, at: 1_001, token: "old"),
            Self.refresh(3, at: 1_010, token: "r1"),
            Self.me(4, at: 1_020, token: "old"),                       // sent before the new token came
            Self.me(5, at: 1_021, token: "new", plan: Self.ok), Self.me(6, at: 1_022, token: "new", plan: Self.ok),
        ])
        #expect(check.passed == true, "\(check.summary)")
    }

    @Test func theExpiredTokenWellAfterTheRefreshFails() {
        let check = Self.oneRefresh([
            Self.me(1, at: 1_000, token: "old"),
            Self.refresh(2, at: 1_010, token: "r1"),
            Self.me(3, at: 1_020, token: "new", plan: Self.ok),
            Self.me(4, at: 3_500, token: "old"),
        ])
        #expect(check.passed == false)
        #expect(check.summary.contains("expired token was sent again after the refresh (#4)"), "\(check.summary)")
    }

    @Test func aRefreshTokenSentTwiceFails() {
        let check = Self.oneRefresh([
            Self.me(1, at: 1_000, token: "old"),
            Self.refresh(2, at: 1_010, token: "r1"),
            Self.me(3, at: 1_020, token: "new"),
            Self.refresh(4, at: 1_030, token: "r1"),
        ])
        #expect(check.passed == false)
        #expect(check.summary.contains("refresh token of #2 was sent again (#4)"), "\(check.summary)")
    }

    @Test func parallel401sAreNotAttemptsOfOneRequest() {
        let attempts = (1...5).map { Self.me(UInt64($0), at: 1_000, token: "old") } + [Self.refresh(6, at: 1_010, token: "r1")]
            + (7...11).map { Self.me(UInt64($0), at: 1_020, token: "new", plan: Self.ok) }
        let checks = VerdictChecks(attempts: attempts, options: VerdictOptions(), now: 100_000)
        #expect(checks.attemptBudget().passed == nil)
        #expect(checks.clientErrorRetry().passed == nil)
        #expect(checks.oneRefresh().passed == true)
    }
}
