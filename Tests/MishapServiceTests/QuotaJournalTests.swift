import Foundation
import MishapService
import MishapTestSupport
import Testing

/// The default scenarios' rate-limited `GET /search` over real sockets: what the journal and the
/// Retry-After check say of its refusals.
@Suite(.onBlockingThreads) struct QuotaJournalTests {
    /// An endpoint's quota refusals are journaled under the rule `quota`, so `?rule=quota`
    /// finds them in the journal and in the Retry-After check.
    @Test func quotaRefusalsAreNamed() async throws {
        let harness = try TestServer()
        var statuses: [Int] = []
        for _ in 0..<6 { statuses.append(try await harness.get("/search?q=swift", session: "q").status) }
        #expect(statuses == [200, 200, 200, 200, 200, 429])
        let refused = try await harness.journal("session=q&rule=quota")
        #expect(refused.count == 1 && refused.first?["status"] as? Int == 429, "\(refused)")
        let retries = try #require(try await harness.admin("retries?session=q")["retries"] as? [[String: Any]])
        #expect(retries.map { $0["rule"] as? String } == ["quota"], "\(retries)")
    }
}
