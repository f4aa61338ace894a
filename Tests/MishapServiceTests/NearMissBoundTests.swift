import Foundation
import MishapEngine
import MishapHTTP
import MishapScenarios
import MishapService
import MishapTestSupport
import Testing

/// A 404's near misses among 10,000 endpoints: close paths are still found (a typo at either
/// end, another case, a slash more), and working them out for long paths does not hold up the
/// requests that match, over raw sockets.
@Suite(.onBlockingThreads) struct NearMissBoundTests {
    /// 10,000 endpoints, half literal (`GET /api/e000000`), half with a parameter
    /// (`GET /api/e000001/{id}`), one rule each; `GET /orders` has 3,000 rules on `q`.
    static let yaml: String = {
        var lines = ["endpoints:"]
        for number in 0..<10_000 {
            let path = String(format: "/api/e%06d", number) + (number % 2 == 0 ? "" : "/{id}")
            lines += ["  - endpoint: GET \(path)", "    rules:", "      - name: one", "        respond: { text: \"\(number)\" }"]
        }
        lines += ["  - endpoint: GET /orders", "    rules:"]
        for number in 0..<3_000 {
            lines += ["      - name: q\(number)", "        when: { query: { q: v\(number) } }", "        respond: { text: \"\(number)\" }"]
        }
        return lines.joined(separator: "\n") + "\n"
    }()

    /// How much later than due an answer read on a raw socket may arrive on a loaded machine
    /// (`Self.stall`, the project's allowance).
    static let stall = Duration.seconds(2)

    static let engine: Engine = {
        // Force-tried: the text above is valid by construction.
        try! ScenarioLoader.load(yaml: yaml, name: "many.yaml").makeEngine()
    }()

    /// The first near miss's reason for `GET path`.
    static func nearest(_ path: String, query: [Field] = []) -> String? {
        engine.nearMisses(for: Request(method: "GET", path: path, query: query)).first?.reason
    }

    @Test("Close paths are found among 10,000 endpoints: a typo at the end or the start, another case, a slash more")
    func closePathsAmongManyEndpoints() {
        #expect(Self.nearest("/api/e009124x") == "no endpoint has the path /api/e009124x; did you mean /api/e009124?")
        #expect(Self.nearest("/aip/e009124") == "no endpoint has the path /aip/e009124; did you mean /api/e009124?")
        // Two paths one edit away (e000912, e009120): the first declared.
        #expect(Self.nearest("/api/e00912") == "no endpoint has the path /api/e00912; did you mean /api/e000912?")
        #expect(Self.nearest("/API/E007000") == "no endpoint has the path /API/E007000; did you mean /api/e007000?")
        #expect(Self.nearest("/api/e007000/") == "no endpoint has the path /api/e007000/; did you mean /api/e007000?")
        #expect(Self.nearest("/API/E007001/{ID}") == "no endpoint has the path /API/E007001/{ID}; did you mean /api/e007001/{id}?")
        #expect(Self.nearest("/nothing/like/any/of/them") == nil)
        #expect(Self.nearest("/" + String(repeating: "segment/", count: 1000)) == nil)
        // The endpoint's own rules when the path is right, the nearest first.
        #expect(Self.nearest("/orders", query: [Field("q", "x")]) == #"query q: expected "v0", got "x""#)
    }

    @Test("404s for long paths among 10,000 endpoints, pipelined on 4 connections, do not hold up a matched request")
    func matchedRequestsAreNotHeldUp() throws {
        let server = try TestServer(yaml: Self.yaml, configuration: ServerConfiguration(port: 0, threads: 1))
        let long = "/" + (0..<700).map { String(format: "segment%04d", $0) }.joined(separator: "/")
        // The first 404 builds the engine's table of close paths, once.
        #expect(try server.sendRaw("GET", long).status == 404)
        let clients = try (0..<4).map { _ in try server.connect(timeoutSeconds: 60) }
        for client in clients {
            try client.send((0..<10).flatMap { _ in RawHTTPConnection.request("GET", long) })
        }
        let matched = try server.connect()
        let start = ContinuousClock.now
        try matched.sendRequest("GET", "/api/e000000")
        let answer = try matched.readResponse()
        let elapsed = ContinuousClock.now - start
        #expect(answer.status == 200 && answer.text == "0")
        #expect(elapsed < .milliseconds(500) + Self.stall, "the matched request waited \(elapsed)")
        for client in clients {
            for _ in 0..<10 { #expect(try client.readResponse().status == 404) }
        }
        let unmatched = server.service.unmatched.list()
        #expect(unmatched.count == 41 && unmatched.allSatisfy { $0.path == long && $0.nearMisses.isEmpty })
    }
}
