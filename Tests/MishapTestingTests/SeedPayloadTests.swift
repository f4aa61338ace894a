import MishapTesting
import MishapTestSupport
import Testing

/// 200 answers the client cannot decode. Seed 002 tells the user to update the app; retrying
/// would get the same body, so the client does not.
@Suite(.onBlockingThreads) struct SeedPayloadTests {
    /// `illegalresponse` answers `{"isAvailable":false}` without `userName`: `.decoding`.
    @Test func illegalResponseIsADecodingError() async throws {
        try await Mishap.withServer(scenarios: defaultScenarios) { mishap in
            let session = mishap.session()
            await #expect(throws: APIError.decoding) {
                try await mishap.client(in: session).checkUserNameAvailable("illegalresponse")
            }
            #expect(mishap.requests(session: session).count == 1)
        }
    }

    /// Each malformed payload of the failure catalogue is `.decoding` too; `lengthmismatch`
    /// belongs here, as URLSession accepts the body cut to `Content-Length`.
    @Test(arguments: ["wrongtype", "truncatedjson", "badutf8", "captiveportal", "notjson", "empty", "lengthmismatch"])
    func malformedPayloadIsADecodingError(userName: String) async throws {
        try await Mishap.withServer(scenarios: defaultScenarios) { mishap in
            await #expect(throws: APIError.decoding) {
                try await mishap.client(in: mishap.session()).checkUserNameAvailable(userName)
            }
        }
    }
}
