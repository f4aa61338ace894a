// The example of docs/swift.md ("A first test"), word for word: DocumentationBlockTests checks
// that the page's block is this file, so if the example stops compiling or passing, this fails.
// A test at the top level, as the page writes it: it waits with async calls only, so it needs no
// thread of its own (.onBlockingThreads).
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import MishapTesting
import Testing

@Test func retriesMaintenanceAsTheServerAsks() async throws {
    let scenarios = """
        endpoint: GET /isUserNameAvailable
        rules:
          - name: maintenance
            when: { query: { userName: maintenance } }
            cycle:
              - { status: 500, headers: { Retry-After: "1" }, json: { reason: "Temporarily unavailable for maintenance" } }
              - { status: 500, headers: { Retry-After: "1" }, json: { reason: "Temporarily unavailable for maintenance" } }
              - { status: 200, json: { isAvailable: true, userName: maintenance } }
        """
    try await Mishap.withServer(scenarios: .yaml(scenarios)) { mishap in
        let session = mishap.session()                      // this test's own cycle and journal
        let urlSession = URLSession(configuration: session.configuration)
        let url = mishap.url("/isUserNameAvailable?userName=maintenance")

        var (_, response) = try await urlSession.data(from: url)
        while (response as! HTTPURLResponse).statusCode == 500 {   // your client's retry loop goes here
            let wait = Double((response as! HTTPURLResponse).value(forHTTPHeaderField: "Retry-After") ?? "1") ?? 1
            try await Task.sleep(for: .seconds(wait))
            (_, response) = try await urlSession.data(from: url)
        }

        #expect(mishap.requests(session: session).count == 3)
        #expect(mishap.retries(session: session).violations == 0)
    }
}
