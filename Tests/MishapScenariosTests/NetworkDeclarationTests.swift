import MishapEngine
import MishapScenarios
import MishapTestSupport
import Testing

/// `network:` on an endpoint or a rule of a scenario file, and the same profiles given as text
/// (`NetworkProfileReader`, the body of `PUT /__mishap/network`): what they compile to, and each
/// mistake located.
@Suite("Network declarations")
struct NetworkDeclarationTests {
    func plan(_ yaml: String, path: String = "/x") throws -> ResponsePlan {
        try ScenarioLoader.load(yaml: yaml).makeEngine().respond(to: Request(method: "GET", path: path))
    }

    @Test func aRulesPresetComesBeforeItsEndpoints() throws {
        let yaml = """
            endpoint: GET /x
            network: 3g
            rules:
              - name: slow
                when: { query: { slow: "1" } }
                network: Edge
                respond: { text: slow }
              - name: plain
                respond: { text: plain }
            """
        let engine = try ScenarioLoader.load(yaml: yaml).makeEngine()
        let slow = engine.respond(to: Request(method: "GET", path: "/x", query: [Field("slow", "1")]))
        #expect(slow.declaredNetwork?.name == "edge")
        #expect(slow.declaredNetwork?.downBytesPerSecond == 30_000)
        #expect(slow.declaredNetwork?.latency == .fixed(840))
        let plain = engine.respond(to: Request(method: "GET", path: "/x"))
        #expect(plain.declaredNetwork?.name == "3g")
        // The engine only declares; the delay and the delivery are the service's to draw.
        #expect(plain.delayMilliseconds == 0 && plain.network == nil)
    }

    @Test func anEndpointWithoutOneDeclaresNothing() throws {
        #expect(try plan("endpoint: GET /x\nrules:\n  - name: a\n    respond: { text: a }").declaredNetwork == nil)
    }

    @Test func aProfileWrittenOutStartsFromItsPreset() throws {
        let yaml = """
            endpoints:
              - endpoint: GET /x
                network:
                  preset: edge
                  loss: 10%
                  latency: { median: 300ms, spread: 2 }
                  jitter: 50
                  bandwidth: { up: 1MB/s }
                  resetAfterBytes: 40%
                  slowClose: 2s
                  upload: { answerEarly: 413 }
                rules:
                  - name: a
                    respond: { text: a }
            """
        let profile = try #require(try plan(yaml).declaredNetwork)
        #expect(profile.name == nil, "changed from its preset, it is a profile of its own")
        #expect(profile.latency == .logNormal(medianMilliseconds: 300, spread: 2))
        #expect(profile.jitterMilliseconds == 50)
        #expect(profile.downBytesPerSecond == 30_000, "the preset's")
        #expect(profile.upBytesPerSecond == 1_000_000)
        #expect(profile.loss == 0.1)
        #expect(profile.resetAfter == .fraction(0.4))
        #expect(profile.slowCloseMilliseconds == 2_000)
        #expect(profile.upload == .answerEarly(413))
    }

    @Test("Rates", arguments: [("20kB/s", 20_000), ("780kbps", 97_500), ("2Mbit/s", 250_000), ("512KiB/s", 524_288),
                               ("1.5MB/s", 1_500_000), ("300", 300), ("8 bit/s", 1)])
    func rates(text: String, bytesPerSecond: Int) throws {
        #expect(try BandwidthText.bytesPerSecond(text).get() == bytesPerSecond)
    }

    @Test func theReaderTakesAPresetAProfileOrAName() throws {
        #expect(try NetworkProfileReader.read(text: #"{"preset": "very bad network"}"#, name: "body", allowOffline: true).get().name
                == "very-bad-network")
        #expect(try NetworkProfileReader.read(text: #""LTE""#, name: "body", allowOffline: true).get().name == "lte")
        // In an admin call a bare duration is seconds, as every admin duration is.
        let profile = try NetworkProfileReader.read(text: #"{"latency": 2, "offline": "500ms", "upload": {"stallAfterBytes": 1024}}"#,
                                                    name: "body", allowOffline: true).get()
        #expect(profile.latency == .fixed(2_000) && profile.offlineMilliseconds == 500 && profile.upload == .stallAfterBytes(1024))
        #expect(try NetworkProfileReader.read(text: #"{"latency": {"min": "100ms", "max": "1s"}}"#, name: "body",
                                              allowOffline: true).get().latency == .uniform(100...1000))
        #expect(try NetworkProfileReader.read(text: #"{"latency": {"mean": "1s", "deviation": "200ms"}}"#, name: "body",
                                              allowOffline: true).get().latency == .normal(meanMilliseconds: 1000, deviationMilliseconds: 200))
    }

    struct Mistake: Sendable, CustomTestStringConvertible {
        let text: String
        let line: Int
        let column: Int
        let containing: String
        var testDescription: String { containing }
    }

    static let readerMistakes: [Mistake] = [
        Mistake(text: #"{"latncy": "2s"}"#, line: 1, column: 2, containing: "unknown key 'latncy' in a network profile (did you mean 'latency'?)"),
        Mistake(text: #"{"preset": "edgy"}"#, line: 1, column: 12, containing: "unknown network preset 'edgy' (did you mean 'edge'?)"),
        Mistake(text: #"{"bandwidth": {"down": "-5kB/s"}}"#, line: 1, column: 24, containing: "'down' must be at least 1 byte per second"),
        Mistake(text: #"{"bandwidth": {"down": "fast"}}"#, line: 1, column: 24, containing: "'down' must be a rate"),
        Mistake(text: #"{"loss": 1.5}"#, line: 1, column: 10, containing: "'loss' must be a number from 0 to 1"),
        Mistake(text: #"{"jitter": "-1s"}"#, line: 1, column: 12, containing: "'jitter' must not be negative"),
        Mistake(text: #"{"upload": {"stallAfterBytes": 1, "resetAfterBytes": 2}}"#, line: 1, column: 12,
                containing: "'upload' takes one of"),
        Mistake(text: #"{"upload": {"answerEarly": 99}}"#, line: 1, column: 28, containing: "'answerEarly' must be a status from 200 to 599"),
        Mistake(text: #"{"latency": {"min": "2s", "max": "1s"}}"#, line: 1, column: 13, containing: "'latency' needs min <= max"),
        Mistake(text: #"{"latency": {"median": "2s"}}"#, line: 1, column: 13, containing: "a 'latency' distribution is {min, max}"),
        Mistake(text: #"{"latency": {"median": "2s", "spread": 0.5}}"#, line: 1, column: 40, containing: "'spread' must be a number from 1 to 100"),
        Mistake(text: #"{"resetAfterBytes": "140%"}"#, line: 1, column: 21, containing: "'resetAfterBytes' must be a percentage from 0% to 100%"),
        Mistake(text: "", line: 1, column: 1, containing: "this one is empty"),
        Mistake(text: #"{"latency": "#, line: 1, column: 13, containing: "YAML syntax"),
    ]

    @Test("Mistakes in a profile given as text", arguments: readerMistakes)
    func readerMistake(_ mistake: Mistake) throws {
        guard case .failure(let error) = NetworkProfileReader.read(text: mistake.text, name: "body", allowOffline: true) else {
            Issue.record("accepted: \(mistake.text)")
            return
        }
        let first = try #require(error.diagnostics.first)
        #expect(first.file == "body")
        #expect((first.line, first.column) == (mistake.line, mistake.column), "\(first)")
        #expect(first.message.contains(mistake.containing), "\(first.message)")
    }

    @Test func offlineIsRefusedInAFileWhichHasNoMomentToStartFrom() throws {
        let yaml = "endpoint: GET /x\nnetwork: { offline: 5s }\nrules:\n  - name: a\n    respond: { text: a }"
        #expect(throws: ScenarioError.self) { try ScenarioLoader.load(yaml: yaml, name: "x.yaml") }
        do {
            _ = try ScenarioLoader.load(yaml: yaml, name: "x.yaml")
        } catch {
            #expect(error.description.hasPrefix("x.yaml:2:12: "), "\(error)")
            #expect(error.description.contains("'offline' is set at runtime"), "\(error)")
        }
    }

    @Test func aBadRuleProfileIsLocatedAndTheFileRefused() throws {
        let yaml = "endpoint: GET /x\nrules:\n  - name: a\n    network: { bandwidth: { sideways: 1kB/s } }\n    respond: { text: a }"
        do {
            _ = try ScenarioLoader.load(yaml: yaml, name: "x.yaml")
            Issue.record("loaded")
        } catch {
            #expect(error.description.hasPrefix("x.yaml:4:29: unknown key 'sideways' in 'bandwidth'"), "\(error)")
        }
    }

    @Test func extendsTakesNoEndpointNetwork() throws {
        let yaml = "endpoints:\n  - endpoint: GET /x\n    rules: [{ name: a, respond: { text: a } }]\n"
            + "  - extends: GET /x\n    network: edge\n    rules: [{ name: b, respond: { text: b } }]"
        do {
            _ = try ScenarioLoader.load(yaml: yaml, name: "x.yaml")
            Issue.record("loaded")
        } catch {
            #expect(error.description.contains("x.yaml:5:5: an endpoint's 'network:' goes with its declaration"), "\(error)")
        }
    }
}
