import Foundation
import MishapEngine
@testable import MishapService
import MishapSupport
import MishapTestSupport
import MishapUpstream
import Testing

/// Network profiles per session over real sockets (URLSession and raw connections): one
/// session shaped and one not, in parallel; loss at a seeded fraction; offline then back;
/// `?for=`; a bad profile refused 422 naming its key; the journal's `network`; the server's
/// default and the `none` preset; an upstream's answer through a profile; answering early.
@Suite(.onBlockingThreads) struct SessionNetworkTests {
    static let yaml = """
        endpoints:
          - endpoint: GET /hello
            rules:
              - { name: hi, respond: { text: hello } }
          - endpoint: POST /upload
            rules:
              - { name: taken, respond: { status: 201, text: taken } }
        """

    static func seconds(_ work: () async throws -> Void) async throws -> Double {
        let start = ContinuousClock.now
        try await work()
        let elapsed = ContinuousClock.now - start
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }

    static func put(_ harness: TestServer, _ query: String, _ body: String) async throws -> ClientResponse {
        try await harness.send("PUT", "/__mishap/network?" + query, body: Data(body.utf8), headers: ["Content-Type": "application/json"])
    }

    @Test func oneSessionShapedAndOneNotInParallel() async throws {
        let harness = try TestServer(yaml: Self.yaml, logger: quietLogger)
        let unshapedBefore = try await Self.seconds { _ = try await harness.get("/hello", session: "fast") }
        let set = try await Self.put(harness, "session=slow", #"{"latency": "2s"}"#)
        #expect(set.status == 200, "\(set.text)")
        #expect(((set.json?["network"] as? [String: Any])?["latency"] as? String) == "2000ms", "\(set.text)")
        async let slow = Self.seconds {
            let text = try await harness.get("/hello", session: "slow").text
            #expect(text == "hello")
        }
        async let fast = Self.seconds {
            let text = try await harness.get("/hello", session: "fast").text
            #expect(text == "hello")
        }
        let (slowSeconds, fastSeconds) = try await (slow, fast)
        #expect(slowSeconds >= 1.95 && slowSeconds < 15, "the shaped session waits its 2 s: \(slowSeconds)")
        #expect(fastSeconds + 1 < slowSeconds, "the other as fast as before (\(unshapedBefore) s alone): \(fastSeconds)")
        let entry = try #require(try await harness.journal("session=slow").last)
        let network = try #require(entry["network"] as? [String: Any])
        #expect(network["profile"] as? String == "custom" && network["latencyMs"] as? Int == 2000)
        #expect(entry["delayMs"] as? Int == 2000)
        #expect(try await harness.journal("session=fast").allSatisfy { $0["network"] == nil })
    }

    @Test func lossResetsASeededFraction() async throws {
        let options = ServiceOptions(engine: EngineOptions(seed: 7))
        let harness = try TestServer(yaml: Self.yaml, options: options, logger: quietLogger)
        #expect(try await Self.put(harness, "session=lossy", #"{"loss": 0.5}"#).status == 200)
        var resets = 0
        for _ in 0..<40 {
            do {
                let response = try harness.sendRaw("GET", "/hello", headers: [("X-Mishap-Session", "lossy")])
                #expect(response.status == 200)
            } catch {
                resets += 1
            }
        }
        #expect((10...30).contains(resets), "about half of 40: \(resets)")
        let lost = try await harness.journal("session=lossy").filter { ($0["network"] as? [String: Any])?["reset"] as? String == "loss" }
        #expect(lost.count == resets && lost.allSatisfy { $0["fault"] as? String == "reset" })
        for _ in 0..<5 { #expect(try harness.sendRaw("GET", "/hello").status == 200, "other requests are not lost") }
    }

    @Test func offlineThenBack() async throws {
        let harness = try TestServer(yaml: Self.yaml, logger: quietLogger)
        let set = try await Self.put(harness, "session=tunnel", #"{"offline": "3s"}"#)
        #expect(set.status == 200 && (set.json?["offlineForMs"] as? Int ?? 0) > 1000, "\(set.text)")
        let refused = try await Self.seconds {
            #expect(throws: (any Error).self) { try harness.sendRaw("GET", "/hello", headers: [("X-Mishap-Session", "tunnel")]) }
        }
        #expect(refused < 10)
        #expect(try harness.sendRaw("GET", "/hello", headers: [("X-Mishap-Session", "other")]).status == 200)
        try await Task.sleep(for: .milliseconds(3300))
        #expect(try harness.sendRaw("GET", "/hello", headers: [("X-Mishap-Session", "tunnel")]).status == 200, "the network came back")
        let entries = try await harness.journal("session=tunnel")
        #expect((entries.first?["network"] as? [String: Any])?["reset"] as? String == "offline")
        #expect(entries.first?["delayMs"] as? Int == 0, "reset at once")
    }

    @Test func forEndsItByItself() async throws {
        let harness = try TestServer(yaml: Self.yaml, logger: quietLogger)
        // 6 s: a loaded machine's slow admin calls still come well within it.
        let set = try await Self.put(harness, "session=s1&for=6", #"{"preset": "high-latency"}"#)
        let expires = try #require(set.json?["expiresInMs"] as? Int, "\(set.text)")
        #expect(expires > 3000 && expires <= 6000)
        #expect(((try await harness.admin("network?session=s1"))["network"] as? [String: Any])?["name"] as? String == "high-latency")
        try await Task.sleep(for: .milliseconds(6200))
        #expect(try await harness.admin("network?session=s1")["network"] is NSNull)
        let after = try await Self.seconds { _ = try await harness.get("/hello", session: "s1") }
        let last = try await harness.journal("session=s1").last
        #expect(after < 10 && last?["network"] == nil, "no 3 s latency any more")
    }

    @Test func aBadProfileIs422NamingItsKey() async throws {
        let harness = try TestServer(yaml: Self.yaml, logger: quietLogger)
        let bad = try await Self.put(harness, "session=s1", #"{"latency": "fast"}"#)
        #expect(bad.status == 422)
        let reason = try #require(bad.json?["reason"] as? String)
        #expect(reason.contains("latency") && reason.range(of: #":\d+:\d+"#, options: .regularExpression) != nil, "\(reason)")
        #expect(try await Self.put(harness, "session=s1", #"{"preset": "5g"}"#).status == 422)
        #expect(try await harness.admin("network?session=s1")["network"] is NSNull, "nothing set")
        #expect(try await Self.put(harness, "session=s1", "").status == 400)
        #expect(try await harness.send("GET", "/__mishap/network").status == 400, "a session is required")
        #expect(try await Self.put(harness, "session=s1&for=0", #"{"preset": "edge"}"#).status == 400)
        #expect(try await harness.send("POST", "/__mishap/network?session=s1").status == 405)
    }

    @Test func deleteAndResetEndTheProfile() async throws {
        let harness = try TestServer(yaml: Self.yaml, logger: quietLogger)
        #expect(try await Self.put(harness, "session=s1", #"{"preset": "edge"}"#).status == 200)
        #expect(try await Self.put(harness, "session=s2", #"{"preset": "edge"}"#).status == 200)
        #expect(try await harness.admin("network?session=s1", method: "DELETE")["network"] is NSNull)
        #expect(harness.service.network(session: "s2") != nil)
        _ = try await harness.admin("reset?session=s2", method: "POST")
        #expect(harness.service.network(session: "s2") == nil, "a session's reset ends its profile")
    }

    @Test func theServerDefaultAppliesUnlessTheSessionSaysNone() async throws {
        let options = ServiceOptions(network: NetworkProfile(name: "slowish", latency: .fixed(1500)))
        let harness = try TestServer(yaml: Self.yaml, options: options, logger: quietLogger)
        let shaped = try await Self.seconds { _ = try await harness.get("/hello") }
        #expect(shaped >= 1.45)
        #expect(try await Self.put(harness, "session=perfect", #"{"preset": "none"}"#).status == 200)
        let perfect = try await Self.seconds { _ = try await harness.get("/hello", session: "perfect") }
        #expect(perfect < shaped)
        let entries = try await harness.journal()
        #expect((entries.first?["network"] as? [String: Any])?["profile"] as? String == "slowish")
        #expect(entries.last?["network"] == nil, "the none preset shapes nothing")
        let admin = try await Self.seconds { _ = try await harness.admin("health") }
        #expect(admin < shaped, "the admin API is never shaped")
    }

    @Test func anUpstreamsAnswerGoesThroughTheProfile() async throws {
        let upstream = try TestServer(yaml: Self.yaml, logger: quietLogger)
        let front = try TestServer(yaml: "endpoints: []\n",
                                   options: ServiceOptions(upstream: UpstreamOptions(url: upstream.baseURL.absoluteString)),
                                   logger: quietLogger)
        #expect(try await Self.put(front, "session=s1", #"{"latency": "700ms"}"#).status == 200)
        var text = ""
        let elapsed = try await Self.seconds { text = try await front.get("/hello", session: "s1").text }
        #expect(text == "hello" && elapsed >= 0.68 && elapsed < 10, "\(text) \(elapsed)")
        let entry = try #require(try await front.journal().last)
        #expect((entry["network"] as? [String: Any])?["latencyMs"] as? Int == 700 && entry["upstream"] != nil)
        #expect(try await Self.put(front, "session=s1", #"{"loss": 1}"#).status == 200)
        #expect(throws: (any Error).self) { try front.sendRaw("GET", "/hello", headers: [("X-Mishap-Session", "s1")]) }
        #expect(try await upstream.journal().count == 1, "a lost request never reaches the upstream")

        // A preset on an upstream's answer: its latency in the delay, its bandwidth on the answer.
        #expect(try await Self.put(front, "session=s1", #"{"preset": "3g"}"#).status == 200)
        let request = Request(method: "GET", path: "/hello", headers: [Field("X-Mishap-Session", "s1")], fromLoopback: true)
        let plan = front.service.respond(to: request)
        #expect(!plan.destination.isHere && plan.delayMilliseconds == 200 && plan.network?.downBytesPerSecond == 97_500)
        let answered: ResponsePlan = await withCheckedContinuation { continuation in
            front.service.forward(request, plan: plan, client: "127.0.0.1", scheme: "http") { answer, _ in continuation.resume(returning: answer) }
        }
        #expect(answered.status == 200 && String(decoding: answered.body, as: UTF8.self) == "hello")
        #expect(answered.delayMilliseconds == 200 && answered.network?.profile == "3g" && answered.network?.downBytesPerSecond == 97_500)
    }

    @Test func anUploadAnsweredEarlyIsPlannedAndJournaled() throws {
        let harness = try TestServer(yaml: Self.yaml, logger: quietLogger)
        let service = harness.service
        let head = Request(method: "POST", path: "/upload", headers: [Field("X-Mishap-Session", "s1"), Field("Content-Length", "100000")])
        #expect(service.uploadShaping(for: head) == nil, "no profile: read as it comes")
        service.setNetwork(NetworkProfile(upBytesPerSecond: 8000, upload: .answerEarly(413)), session: "s1")
        let shaping = try #require(service.uploadShaping(for: head))
        #expect(shaping.upBytesPerSecond == 8000 && shaping.fault == .answerEarly(413))
        #expect(shaping.earlyAnswer?.status == 413)
        let early = String(decoding: shaping.earlyAnswer?.body ?? [], as: UTF8.self)
        #expect(early.contains("answered before the request body was read"))
        let entry = try #require(service.journal.entries().entries.last)
        let profile = entry.network?.profile
        #expect(entry.status == 413 && entry.session == "s1" && profile == "custom")
        let prefixed = Request(method: "POST", path: "/__session/s1/upload", headers: [Field("Content-Length", "10")])
        #expect(service.uploadShaping(for: prefixed)?.fault == .answerEarly(413), "through the session prefix too")
        #expect(service.uploadShaping(for: Request(method: "POST", path: "/upload")) == nil, "other sessions read as it comes")
    }

    @Test func theSessionsProfileComesBeforeTheRulesAndTheRulesBeforeTheDefault() throws {
        let options = ServiceOptions(network: NetworkProfile(name: "slowish", latency: .fixed(100)))
        let service = try MishapService(source: .yaml(Self.yaml, name: "t.yaml"), options: options, logger: quietLogger)
        let request = Request(method: "GET", path: "/hello", headers: [Field("X-Mishap-Session", "s1")])
        var declared = ResponsePlan(status: 200, delayMilliseconds: 300, fault: .truncate)
        declared.declaredNetwork = NetworkProfile(name: "rule", latency: .fixed(50))

        var plan = declared
        #expect(service.applyNetwork(request, &plan)?.profile == "rule", "the rule's before the default")
        #expect(plan.delayMilliseconds == 350 && plan.fault == .truncate, "on top of the delay; the rule's fault stays")
        #expect(plan.network == nil, "nothing on the socket: latency only")
        var undeclared = ResponsePlan(status: 200)
        #expect(service.applyNetwork(request, &undeclared)?.profile == "slowish" && undeclared.delayMilliseconds == 100)

        service.setNetwork(NetworkPresets.named("3g")!, session: "s1")
        plan = declared
        #expect(service.applyNetwork(request, &plan)?.profile == "3g", "the session's before the rule's")
        #expect(plan.delayMilliseconds == 500 && plan.network?.downBytesPerSecond == 97_500 && plan.prepared == nil)

        service.setNetwork(NetworkPresets.named("none")!, session: "s1")
        plan = declared
        #expect(service.applyNetwork(request, &plan) == nil && plan.delayMilliseconds == 300, "none: a perfect network")

        service.setNetwork(NetworkProfile(loss: 1), session: "s1")
        var hanging = ResponsePlan(status: 200, hang: true)
        #expect(service.applyNetwork(request, &hanging)?.resetReason == "loss")
        #expect(hanging.fault == .reset && !hanging.hang)
    }

    @Test func aScenarioFilesNetworkAppliesUnlessTheSessionSetsOne() async throws {
        let yaml = """
            endpoints:
              - endpoint: GET /slow
                network: { latency: 1500ms }
                rules:
                  - { name: lossy, when: { query: { lost: "yes" } }, network: { loss: 1 }, respond: { text: never } }
                  - { name: ok, respond: { text: slow } }
            """
        let harness = try TestServer(yaml: yaml, logger: quietLogger)
        let declared = try await Self.seconds { _ = try await harness.get("/slow") }
        #expect(declared >= 1.45 && declared < 15, "the endpoint's 1.5 s: \(declared)")
        #expect(throws: (any Error).self) { try harness.sendRaw("GET", "/slow?lost=yes") }
        #expect(try await Self.put(harness, "session=s1", #"{"preset": "none"}"#).status == 200)
        let perfect = try await Self.seconds { _ = try await harness.get("/slow", session: "s1") }
        #expect(perfect < declared, "the session's none comes first: \(perfect)")
        let entries = try await harness.journal()
        #expect((entries.first?["network"] as? [String: Any])?["latencyMs"] as? Int == 1500)
        #expect((entries.dropFirst().first?["network"] as? [String: Any])?["reset"] as? String == "loss")
    }

    @Test func theTableIsBoundedAndEmptiesAgain() {
        let table = SessionNetworks()
        #expect(table.isEmpty)
        let profile = NetworkProfile(latency: .fixed(10))
        for index in 0..<10 { table.set(profile, session: "s\(index)", milliseconds: nil, now: 0, limit: 4) }
        let kept = (0..<10).filter { table.setting(session: "s\($0)", now: 0) != nil }
        #expect(kept.count <= 4 && kept.contains(9) && !kept.contains(0), "the most recent kept, at most the limit: \(kept)")
        table.set(profile, session: "brief", milliseconds: 100, now: 1000, limit: 4)
        #expect(table.setting(session: "brief", now: 1099) != nil && table.setting(session: "brief", now: 1100) == nil)
        let offline = table.set(NetworkProfile(offlineMilliseconds: 500), session: "o", milliseconds: nil, now: 2000, limit: 4)
        #expect(offline.isOffline(now: 2499) && !offline.isOffline(now: 2500))
        table.remove(session: nil)
        #expect(table.isEmpty, "while no session has a profile, one atomic load")
    }
}
