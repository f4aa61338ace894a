import MishapTesting
import XCTest

/// The maintenance flow as an XCTest case: `Mishap.withServer` works the same there.
final class MaintenanceXCTests: XCTestCase {
    /// `maintenance` fails twice with `Retry-After: 1`; the client waits as told and succeeds on the third request.
    func testMaintenanceClearsAfterTwoHonouredRetries() async throws {
        try await Mishap.withServer(scenarios: quickMaintenance) { mishap in
            let session = mishap.session()
            let answer = try await mishap.client(in: session).checkUserNameAvailable("maintenance")
            XCTAssertEqual(answer, UserNameAvailableMessage(isAvailable: true, userName: "maintenance"))
            XCTAssertEqual(mishap.requests(session: session).map(\.status), [500, 500, 200])
            XCTAssertEqual(mishap.retries(session: session).map(\.honoured), [true, true])
        }
    }
}
