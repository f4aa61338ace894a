import MishapTesting
import MishapTestSupport
import Testing

/// One server shared by tests running at once: each session has its own maintenance cycle,
/// journal and retry checks, so no test sees another's requests.
@Suite(.onBlockingThreads) struct ParallelSessionTests {
    /// One server for every case of `eachTestCaseSeesItsOwnCycle`, started by the first to run;
    /// it serves until the test process ends.
    static let shared: RunningMishap = try! Mishap.start(scenarios: quickMaintenance)

    /// Ten tasks doing the maintenance flow at once each see exactly their own 500, 500, 200.
    @Test func concurrentClientsEachSeeTheirOwnCycle() async throws {
        try await Mishap.withServer(scenarios: quickMaintenance) { mishap in
            try await withThrowingTaskGroup(of: MishapSession.self) { group in
                for _ in 1...10 {
                    group.addTask {
                        let session = mishap.session()
                        let answer = try await mishap.client(in: session).checkUserNameAvailable("maintenance")
                        #expect(answer.isAvailable)
                        return session
                    }
                }
                for try await session in group {
                    #expect(mishap.requests(session: session).map(\.status) == [500, 500, 200])
                    #expect(mishap.retries(session: session).map(\.honoured) == [true, true])
                }
            }
            #expect(mishap.requests().count == 30)
        }
    }

    /// Test cases running in parallel on the shared server each see 500, 500, 200 in their own session.
    @Test(arguments: 1...5)
    func eachTestCaseSeesItsOwnCycle(_ case: Int) async throws {
        let session = Self.shared.session("case-\(`case`)")
        #expect(try await Self.shared.client(in: session).checkUserNameAvailable("maintenance").isAvailable)
        #expect(Self.shared.requests(session: session).map(\.status) == [500, 500, 200])
        #expect(Self.shared.retries(session: session).allSatisfy { $0.honoured == true })
    }
}
