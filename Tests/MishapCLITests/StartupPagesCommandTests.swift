import Foundation
import MishapTestSupport
import Testing

/// `mishap serve` gives back the pages only starting used (`StartupPages`), then serves as
/// before: those pages fault back in from the page cache when a request needs them.
@Suite("mishap serve: startup pages", .onBlockingThreads)
struct StartupPagesCommandTests {
    @Test("serve gives back the pages only starting used and still answers every kind of request")
    func givesBackStartupPages() async throws {
        let (server, port) = try await ServeTests.startServer(
            ["serve", "--port", "0", "--scenarios", Paths.scenarios, "--threads", "2", "--log-level", "debug"])
        defer { server.kill() }
        #expect(await DaemonTests.waitForLog(server, "serving", timeout: .seconds(10)), "\(server.standardError)")
        // A second after serving starts.
        #expect(await DaemonTests.waitForLog(server, "gave back", timeout: .seconds(10)), "\(server.standardError)")
        let line = server.standardError.split(separator: "\n").first { $0.contains("gave back") }.map(String.init) ?? ""
        let words = line.split(separator: " ")
        let kib = words.firstIndex(of: "back").flatMap { Int(words[$0 + 1]) }
        // The executable's code alone is several MiB after starting.
        #expect((kib ?? 0) > 1024, "\(server.standardError)")

        let base = "http://127.0.0.1:\(port)"
        #expect(try await ServeTests.curl("\(base)/isUserNameAvailable?userName=someone").body.contains(#""userName":"someone""#))
        let login = try await ServeTests.curl("\(base)/login", extra: ["-H", "Content-Type: application/json",
                                                                     "-d", #"{"email":"john@doe.com","password":"onlyjohnknowsme"}"#])
        #expect(login.status == 200 && login.body.contains(#""user_id":"123""#), "\(login)")
        let cycle = try await [1, 2, 3].asyncMap { _ in try await ServeTests.curl("\(base)/isUserNameAvailable?userName=maintenance").status }
        #expect(cycle == [500, 500, 200])
    }
}

extension Array {
    /// The elements transformed one after the other by an asynchronous `transform`.
    fileprivate func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var results: [T] = []
        for element in self { results.append(try await transform(element)) }
        return results
    }
}
