import Foundation
import MishapTestSupport
import Testing

@Suite(.onBlockingThreads) struct SmokeTests {
    @Test func answersAnAvailableName() async throws {
        let server = try TestServer()
        let response = try await server.send("GET", "/isUserNameAvailable?userName=someone")
        #expect(response.status == 200)
        #expect(response.header("Content-Type") == "application/json; charset=utf-8")
        #expect(response.json?["isAvailable"] as? Bool == true)
        #expect(response.json?["userName"] as? String == "someone")
    }
}
