import Foundation
import MishapTestSupport
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// docs/scaling-out.md's nginx configuration, as written (its ports made free ones), in front of
/// three `mishap serve` processes on loopback: sessions keep their cycles, state, quotas and
/// journal through it, each whole on one instance.
@Suite("Documentation: several instances behind nginx", .onBlockingThreads)
struct ScalingOutTests {
    /// Debian's nginx (`make deps` installs it).
    static var nginx: String? {
        ["/usr/sbin/nginx", "/usr/bin/nginx", "/usr/local/sbin/nginx"].first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// nginx's main configuration around the page's block: its pid file, logs and temporary
    /// folders in `folder`, one process in the foreground (stopped with it).
    static func mainConfiguration(folder: String) -> String {
        """
        daemon off;
        master_process off;
        pid \(folder)/nginx.pid;
        error_log \(folder)/error.log warn;
        events { worker_connections 1024; }
        http {
            access_log off;
            client_body_temp_path \(folder)/client-body;
            proxy_temp_path \(folder)/proxy;
            fastcgi_temp_path \(folder)/fastcgi;
            uwsgi_temp_path \(folder)/uwsgi;
            scgi_temp_path \(folder)/scgi;
            include \(folder)/mishap.conf;
        }
        """
    }

    /// A request through nginx: the status, the body and a header's value.
    static func send(_ url: String, method: String = "GET", headers: [String: String] = [:], body: String? = nil,
                     with session: URLSession) async throws -> (status: Int, body: String, retryAfter: String?) {
        var request = URLRequest(url: try #require(URL(string: url)))
        request.httpMethod = method
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        request.httpBody = body.map { Data($0.utf8) }
        let (data, response) = try await session.data(for: request)
        let http = try #require(response as? HTTPURLResponse)
        return (http.statusCode, String(decoding: data, as: UTF8.self), http.value(forHTTPHeaderField: "Retry-After"))
    }

    @Test("60 sessions through nginx keep their cycles, state, quotas and journals, each on one instance")
    func sessionsStayWhole() async throws {
        let nginx = try #require(Self.nginx, "nginx is not installed: make deps installs it (Debian's nginx package)")
        let block = try #require(DocumentationPages.load().blocks.first { $0.marker == ["example", "nginx-sessions"] },
                                 "no <!-- check: example nginx-sessions --> block in docs/scaling-out.md")
        let folder = try TemporaryFolder()
        var instances: [(ChildProcess, UInt16)] = []
        defer { for (server, _) in instances { server.kill() } }
        for _ in 0..<3 {
            instances.append(try await ServeTests.startServer(["serve", "--scenarios", Paths.scenarios, "--port", "0", "--watch", "off",
                                                               "--log-level", "warning"]))
        }
        // nginx listens on a port found free a moment before: tried again on a clash.
        var proxy: ChildProcess?
        var front: UInt16 = 0
        defer { proxy?.kill() }
        for _ in 0..<5 where proxy == nil {
            front = try #require(DocumentationStory.freePort())
            let pairs = [("8080", String(front))] + zip(["8081", "8082", "8083"], instances.map { String($0.1) }).map { ($0.0, $0.1) }
            try folder.write("mishap.conf", DocumentationStory.substitute(block.text, pairs))
            try folder.write("nginx.conf", Self.mainConfiguration(folder: folder.path))
            let started = try ChildProcess(nginx, ["-p", folder.path, "-c", folder.path + "/nginx.conf", "-e", folder.path + "/error.log"])
            let up = await eventually(within: .seconds(10), every: .milliseconds(50)) {
                guard started.isRunning else { return true }
                return (try? await run(ServeTests.curl, ["-s", "-o", "/dev/null", "http://127.0.0.1:\(front)/__mishap/health"]))?.status == 0
            }
            if up && started.isRunning { proxy = started }
        }
        let errorLog = (try? String(contentsOfFile: folder.path + "/error.log", encoding: .utf8)) ?? ""
        try #require(proxy != nil, "nginx did not start: \(errorLog)")

        let base = "http://127.0.0.1:\(front)"
        let sessions = (0..<60).map { "s\($0)" }
        let client = URLSession(configuration: .ephemeral)
        defer { client.finishTasksAndInvalidate() }
        // Each session: the maintenance cycle, a state value set and read back, its own rate limit.
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (index, session) in sessions.enumerated() {
                group.addTask {
                    let byPath = index % 2 == 1
                    let headers = byPath ? [:] : ["X-Mishap-Session": session]
                    let prefix = byPath ? "\(base)/__session/\(session)" : base
                    var statuses: [Int] = []
                    for _ in 0..<3 {
                        statuses.append(try await Self.send("\(prefix)/isUserNameAvailable?userName=maintenance", headers: headers, with: client).status)
                    }
                    #expect(statuses == [500, 500, 200], "\(session): \(statuses)")
                    let value = index % 3 == 0 ? "500" : "reset"
                    let set = try await Self.send("\(base)/__mishap/state?session=\(session)", method: "POST",
                                                  body: "{\"refreshFailure\": \"\(value)\"}", with: client)
                    #expect(set.status == 200, "\(session): \(set)")
                    let read = try await Self.send("\(base)/__mishap/state?session=\(session)", with: client)
                    let state = try JSONSerialization.jsonObject(with: Data(read.body.utf8)) as? [String: Any]
                    let refresh = (state?["state"] as? [String: Any])?["refreshFailure"] as? [String: Any]
                    #expect(refresh?["value"] as? String == value, "\(session): \(read.body)")
                    var searches: [Int] = []
                    for _ in 0..<6 { searches.append(try await Self.send("\(prefix)/search?q=swift", headers: headers, with: client).status) }
                    #expect(searches == [200, 200, 200, 200, 200, 429], "\(session): \(searches)")
                    let count = try await Self.send("\(base)/__mishap/requests/count?session=\(session)", with: client)
                    #expect(count.body.hasPrefix("{\"count\":9,"), "\(session): its instance's journal: \(count.body)")
                }
            }
            try await group.waitForAll()
        }

        // Each instance's journal, read from it directly, holds whole sessions: all 9 requests
        // of each of its sessions, and no session is on two instances.
        var owner: [String: Int] = [:]
        for (number, (_, port)) in instances.enumerated() {
            let journal = try await Self.send("http://127.0.0.1:\(port)/__mishap/requests", with: client)
            let entries = (try JSONSerialization.jsonObject(with: Data(journal.body.utf8)) as? [String: Any])?["requests"] as? [[String: Any]] ?? []
            var counts: [String: Int] = [:]
            for entry in entries { counts[entry["session"] as? String ?? "", default: 0] += 1 }
            for (session, count) in counts {
                #expect(count == 9, "instance \(number) holds \(count) of \(session)'s 9 requests")
                #expect(owner.updateValue(number, forKey: session) == nil, "\(session) is on two instances")
            }
        }
        #expect(Set(owner.keys) == Set(sessions), "sessions journaled: \(owner.keys.sorted())")
        #expect(Set(owner.values).count == 3, "every instance serves some sessions: \(owner)")
    }
}
